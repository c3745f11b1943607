"""The app's screens: home, new debate, debate, review, help, and small dialogs."""
