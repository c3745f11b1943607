"""The machinery every protocol shares: definitions, events, agents, moderation, replay,
replies, parameters, roles, fitting and the reading of untrusted replies."""
