"""Which transport a tool's connections used, as the server saw them: read while the tool runs
(its sessions are gone afterwards), summed up per run and compared between the tools, so that a
ratio is only printed for tools that used the same one."""
import threading
from collections import Counter
from dataclasses import dataclass, field


@dataclass
class Transport:
    """A run's sessions by transport ('plaintext', a TLS version and cipher, None: the server
    could not say); error: why none could be read."""
    sessions: Counter = field(default_factory=Counter)
    error: str = ""

    def kind(self):
        """'plaintext', 'TLS' or 'GSSAPI' when every session seen used it; None when mixed, unknown
        or none."""
        kinds = {t if t in (None, "plaintext", "GSSAPI") else "TLS" for t in self.sessions}
        return kinds.pop() if len(kinds) == 1 and None not in kinds else None

    def __str__(self):
        if not self.sessions:
            return f"no session seen{f' ({self.error})' if self.error else ''}"
        n = sum(self.sessions.values())
        parts = [f"{c}/{n} {'unknown' if t is None else t}" for t, c in self.sessions.most_common()]
        return ", ".join(parts)

    def what(self):
        """The transports without their counts: 'plaintext', 'TLSv1.3 ...', 'plaintext + ...'."""
        return " + ".join("unknown" if t is None else t for t in self.sessions) or "no session seen"

    def short(self):
        """For a table's column: '8 plain', '8 TLS', 'mixed', '8 unknown', 'none'."""
        kind, n = self.kind(), sum(self.sessions.values())
        if not self.sessions:
            return "none"
        if kind:
            return f"{n} {'plain' if kind == 'plaintext' else kind}"
        return f"{n} unknown" if set(self.sessions) == {None} else "mixed"


def mismatch(a_name, a, b_name, b):
    """Why two runs' ratio must not be printed, or None when both used the same transport."""
    if a is None or b is None:
        return None  # not watched (a caller that compares no transports)
    for name, t in ((a_name, a), (b_name, b)):
        if t.kind() is None:
            return f"{name}'s transport is not one the server confirmed: {t}"
    if a.kind() != b.kind():
        return f"transports differ: {a_name} {a}, {b_name} {b}"
    return None


class Watch:
    """Reads the server's sessions on db in a thread while a tool runs: from the start until
    `expected` new sessions are there at once (a run's connections are all up), or, without
    `expected`, until the tool ends; sessions already there at the start are not the tool's.
    The reads back off from 20 ms to 0.5 s so that they cost the measured tool little."""

    def __init__(self, server, db, expected=None):
        self.server, self.db, self.expected = server, db, expected
        self.seen, self.error = {}, ""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)

    def __enter__(self):
        self._before = set(self._read() or {})
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        return False

    def _read(self):
        try:
            return self.server.sessions(self.db)
        except RuntimeError as e:
            self.error = str(e).splitlines()[0]
            return None

    def _poll(self):
        wait = 0.02
        while not self._stop.wait(wait):
            now = self._read()
            if now is None:
                return
            new = {k: v for k, v in now.items() if k not in self._before}
            self.seen.update(new)
            if self.expected and len(new) >= self.expected:
                return
            wait = min(wait * 1.5, 0.5)

    def result(self):
        return Transport(Counter(self.seen.values()), self.error)
