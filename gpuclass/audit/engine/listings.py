"""Listings: auction-like records with free text, one report per record.

Cards come from the description (the information lines count only when it names
none: a listing often repeats the card there, and that is one card, not two); a
record without a description, a ``GPU`` special with no recognisable card, a name
that does not say which card, a name that reads as a card only with look-alike letters
of another script taken as Latin (not counted), and an id seen before in the same
source are problems.  A name that fits several allowlisted editions of equal slices counts,
with a problem naming the editions.  Text is matched by :mod:`gpuclass.textmatch`;
cards are counted per report as the matches name them (no numpy on this path: a small
feed audits in the time a script takes to start).

>>> feed = [{"id": 1, "description": ["Intel Core i7-6700", "GPU - Nvidia GeForce GTX 1080"],
...          "specials": ["GPU"]},
...         {"id": 2, "description": ["Quadro RTX 6000"], "specials": ["GPU"]}]
>>> [(r.server, r.gpu_capable, r.slices, r.reason) for r in audit_records(feed)]
[('1', True, 4, '1x GeForce GTX 1080: 4 slices'), ('2', False, 0, 'unsupported GPU only: 1x TU102GL [Quadro RTX 6000/8000] (10de:1e30)')]
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ...policy import PolicyArg
    from typing import Any

from ...textmatch.matcher import AMBIGUOUS_TEXT, EDITIONS_TEXT, SUPPORTED_TEXT, UNSUPPORTED_TEXT
from ..render import (GPU_SPECIAL, NO_DESCRIPTION, NO_ID, ambiguous, card_entries, conflicts, duplicate_id, editions,
                      finish, look_alike_letters, unsupported_entries)
from ..results.columns import PASSTHROUGH
from ..results.listing import ReportBatch, SharedOutcome
from ..results.reports import ServerReport, passthrough

__all__ = ["TextAuditor", "audit_records", "audit_texts"]

_BATCH = 512    # records read per automaton pass (a small batch keeps few objects alive)
_KNOWN = 65536  # distinct record texts, lines and outcomes kept (a listing repeats its lines)


def _lines(value: Any, what: str, problems: list[str]) -> list[str]:
    """A record's list of text lines; anything else is reported, never guessed at."""
    if type(value) is list:
        for item in value:
            if type(item) is not str:
                break
        else:
            return value  # the usual record: read as it is
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list):
        problems.append(f"{what} is {type(value).__name__}, expected a list of text")
        return []
    out = []
    for i, item in enumerate(value):
        if isinstance(item, str):
            out.append(item)
        else:
            problems.append(f"{what}[{i}] is {type(item).__name__}, expected text")
    return out


class TextAuditor:
    """Reports for auction-like records, matched in batches (one automaton pass each)."""

    # the keys of a record that a report reads (a reader may hand over only these)
    FIELDS = ("id", "server", "description", "information", "specials", *PASSTHROUGH)

    def __init__(self, policy: PolicyArg = None, matcher: Any = None) -> None:
        from ...textmatch import TextMatcher, default_matcher

        if matcher is None:
            matcher = default_matcher() if policy is None else TextMatcher.cached(policy)
        self.matcher = matcher
        self.compiled = matcher.compiled
        self.card_ids = tuple(matcher.compiled.card_ids)
        self._ids: dict[str, int] = {}   # server id -> first row, within the current source
        self._source: str | None = None
        # a record's (description, information, specials) -> its outcome; a line -> its
        # mentions (entry, count, words); what a text says -> its outcome
        self._known: dict[tuple, SharedOutcome] = {}
        self._line_mentions: dict[str, tuple[tuple[int, int, str], ...]] = {}
        # a line that names a card only with look-alike letters of another script -> its problems
        self._line_flags: dict[str, tuple[str, ...]] = {}
        self._outcomes: dict[tuple, SharedOutcome] = {}

    def reports(self, items: Iterable[tuple[int, str, Any, str | None]]) -> Iterator[ServerReport]:
        """``items``: ``(row, source, record, error)``; a non-None error flags the row."""
        for batch in self.batches(items):
            yield from batch.reports()

    def batches(self, items: Iterable[tuple[int, str, Any, str | None]]) -> Iterator[ReportBatch]:
        """The reports of :meth:`reports`, a :class:`~gpuclass.audit.batch.ReportBatch` per
        batch of records (whose reports are made when asked for: a CSV writer reads the
        shared outcomes instead)."""
        it = iter(items)
        while True:
            batch = list(itertools.islice(it, _BATCH))
            if not batch:
                return
            yield ReportBatch(self._batch(batch))

    def _batch(self, batch: list[tuple[int, str, Any, str | None]]) -> list[Any]:
        out: list[Any] = []  # ReportBatch entries
        # (place in out, text key (a place for a text of the wrong type), its lines, the record)
        todo: list[tuple[Any, ...]] = []
        known = self._known
        ids, last_source = self._ids, self._source
        for row, source, rec, error in batch:
            if error is not None or not isinstance(rec, dict):
                why = error or f"malformed record: {type(rec).__name__}, expected an object"
                # a flagged row keeps the server id it still has (a CSV row's, stray quote and all)
                sid = rec.get("id") if error is not None and isinstance(rec, dict) else None
                out.append(finish(ServerReport(row, source, sid if isinstance(sid, str) and sid else None,
                                               problems=[why])))
                continue
            sid = rec["id"] if "id" in rec else rec.get("server")
            problems: list[str] | None = None  # the record's own (made where it has one)
            if sid is None or sid == "":
                server = None
                problems = [NO_ID]
            else:
                server = sid if type(sid) is str else str(sid)
                if source is not last_source and source != last_source:  # ids are per source
                    self._source, self._ids = source, {}
                    ids, last_source = self._ids, source
                first = ids.setdefault(server, row)
                if first != row:
                    problems = [duplicate_id(server, first)]
            d, i, sp = rec.get("description"), rec.get("information"), rec.get("specials")
            try:  # a text seen before is taken as it is: only well-typed texts are kept
                key: Any = (tuple(d) if type(d) is list else d, tuple(i) if type(i) is list else i,
                            tuple(sp) if type(sp) is list else sp)
                found = known.get(key)
            except TypeError:  # an unhashable value (an object): read the long way
                key = found = None
            if found is not None:  # the usual record: what its text says, as it says it
                out.append((row, source, server, found, rec) if problems is None
                           else found.report_for(row, source, server, problems, passthrough(rec)))
                continue
            if problems is None:
                problems = []
            shape: list[str] = []  # fields of the wrong type, in field order
            desc = _lines(d, "description", shape)
            n_desc = len(shape)
            info = _lines(i, "information", shape)
            specials = _lines(sp, "specials", shape)
            if shape:  # rare: then the missing description is told here, in field order
                problems.extend(shape[:n_desc])
                if not n_desc and not any(line.strip() for line in desc):
                    problems.append(NO_DESCRIPTION)
                problems.extend(shape[n_desc:])
            if shape or key is None:
                key = len(out)  # its own outcome, never kept
            todo.append((len(out), key, desc, info, specials, row, source, server, problems, rec))
            out.append(None)  # its place, filled in once the text is resolved
        if todo:
            self._resolve(todo, out)
        return out

    def _resolve(self, todo: list[tuple[Any, ...]], out: list[Any]) -> None:
        """Finish the reports of texts not seen before: their lines not seen before are
        matched (one automaton pass), then each text's outcome is put together from its
        lines' mentions (texts that mention the same cards share it)."""
        lines = self._line_mentions
        new = list(dict.fromkeys(line for _, _, desc, info, *_ in todo for line in (*desc, *info)
                                 if line not in lines))
        if new:
            if len(lines) + len(new) > _KNOWN:
                lines.clear()
                self._line_flags.clear()
                new = list(dict.fromkeys(line for _, _, desc, info, *_ in todo for line in (*desc, *info)))
            lines.update(zip(new, self._mentions(new)))
            self._look_alikes([line for line in new if not line.isascii()])
        known, outcomes = self._known, self._outcomes
        if len(known) + len(todo) > _KNOWN:
            known.clear()
        if len(outcomes) > _KNOWN:
            outcomes.clear()
        mentions, chain = lines.__getitem__, itertools.chain.from_iterable
        flags = self._line_flags
        for i, key, desc, info, specials, row, source, server, problems, rec in todo:
            well_typed = type(key) is tuple
            done = known.get(key) if well_typed else None  # the same text earlier in the batch
            if done is None:
                # Cards come from the description; the notes count only when it names none
                # (a listing often repeats the card there).
                hits = tuple(chain(map(mentions, desc)))
                read = desc
                if not hits:
                    hits = tuple(chain(map(mentions, info)))
                    read = (*desc, *info)
                notes = tuple(chain(flags.get(line, ()) for line in read)) if flags else ()
                told = (hits, well_typed and not any(map(str.strip, desc)),
                        not hits and any(s.strip().lower() == "gpu" for s in specials), notes)
                done = outcomes.get(told)
                if done is None:
                    done = outcomes[told] = SharedOutcome(self._outcome(*told), self.card_ids)
                if well_typed:
                    known[key] = done
            out[i] = ((row, source, server, done, rec) if not problems
                      else done.report_for(row, source, server, problems, passthrough(rec)))

    def _mentions(self, texts: list[str]) -> list[tuple[tuple[int, int, str], ...]]:
        """The mentions ``(entry, count, words)`` of each text (one automaton pass)."""
        matches = self.matcher.find_many(texts)
        found: list[list[tuple[int, int, str]]] = [[] for _ in texts]
        for rec_i, ent, count, words in zip(matches.records, matches.entries, matches.counts, matches.text):
            found[rec_i].append((ent, count, words))
        return [tuple(f) for f in found]

    def _look_alikes(self, texts: list[str]) -> None:
        """Flag the lines (not ASCII) that name a card only once their look-alike letters of
        another script are read as Latin (``RТX 6000 Ada`` with a Cyrillic Т): the names that
        reading adds are problems, and what the line names only as written (``GTX 1080`` of
        ``GTX 1080 Ті``) no longer counts; the rest of the line counts as it is."""
        from ...textmatch.normalize import confusable_reading

        readings = {}
        for text in texts:
            r = confusable_reading(text)
            if r is not None:
                readings[text] = r
        if not readings:
            return
        import unicodedata

        lines, entries = self._line_mentions, self.matcher.entries
        read = self._mentions([reading for reading, _ in readings.values()])
        for (text, (_, letters)), as_read in zip(readings.items(), read):
            as_written = list(lines[text])
            if sorted(as_read) == sorted(as_written):
                continue  # the letters are in no name (a word of Russian): nothing to tell
            said = ", ".join(f"U+{ord(c):04X} ({unicodedata.name(c, '?')})" for c in letters)
            added, kept, lost = list(as_read), [], []
            for hit in as_written:
                if hit in added:
                    added.remove(hit)
                    kept.append(hit)
                else:
                    lost.append(hit)
            lines[text] = tuple(kept)
            flagged = [(words, entries[ent].label or entries[ent].name) for ent, _, words in added]
            # a name the reading changes rather than makes ("GTX 1080" of "GTX 1080 Ti"), or
            # takes away (an aside: "not included" with a Cyrillic o)
            flagged += [(words, None) for _, _, words in lost
                        if not any(f" {words} " in f" {more} " for more, _ in flagged)]
            self._line_flags[text] = tuple(look_alike_letters(words, name, said) for words, name in flagged)

    def _outcome(self, hits: tuple[tuple[int, int, str], ...], no_description: bool,
                 gpu_special: bool, notes: tuple[str, ...] = ()) -> ServerReport:
        """What a record's text says (its cards, unsupported GPUs and text problems), as a
        finished report of no server, from its mentions ``(entry, count, words)``: shared
        by every record whose text says the same."""
        r = ServerReport(0, "", None)
        if no_description:
            r.problems.append(NO_DESCRIPTION)
        entries = self.matcher.entries
        evidence: dict[int, list[str]] = {}
        unsupported: dict[str, int] = {}
        per_card: dict[int, int] = {}
        for ent, count, words in hits:
            e = entries[ent]
            if e.kind in (SUPPORTED_TEXT, EDITIONS_TEXT):
                per_card[e.target] = per_card.get(e.target, 0) + count
                seen = evidence.setdefault(e.target, [])
                if words not in seen:
                    seen.append(words)
                if e.kind == EDITIONS_TEXT:
                    r.problems.append(editions(words, e.name, self.compiled.cards[e.target]["name"]))
            elif e.kind == UNSUPPORTED_TEXT:
                label = e.label or e.name  # pcinames.unsupported_label's, made with the matcher
                unsupported[label] = unsupported.get(label, 0) + count
            elif e.kind == AMBIGUOUS_TEXT:
                r.problems.append(ambiguous(words, e.name))
        r.cards = card_entries(self.compiled, per_card, "text",
                               {c: "; ".join(t) for c, t in evidence.items()})
        r.problems.extend(conflicts(self.compiled, [c for c, k in per_card.items() if k]))
        unsupported_entries(r, unsupported)
        r.problems.extend(notes)
        if gpu_special:
            r.problems.append(GPU_SPECIAL)
        return finish(r)


def audit_records(records: Iterable[Any], *, policy: PolicyArg = None, source: str = "records",
                  matcher: Any = None) -> Iterator[ServerReport]:
    """One report per auction-like record (a dict with ``id``, ``description`` ...).

    >>> [r.problems for r in audit_records([{"id": 7, "description": "RTX 6000"}, "oops"])]
    [["'rtx 6000' does not say which card: RTX 6000 (could be RTX 6000 Ada Generation or another card)"], ['malformed record: str, expected an object']]
    """
    auditor = TextAuditor(policy, matcher)
    items = ((i, source, rec, None) for i, rec in enumerate(records, 1))
    return auditor.reports(items)


def audit_texts(texts: Iterable[tuple[Any, Any]], *, policy: PolicyArg = None, source: str = "texts",
                matcher: Any = None) -> Iterator[ServerReport]:
    """One report per ``(server, text)`` pair (a text column of a table).

    >>> next(audit_texts([("gex44", "Nvidia RTX 4000 SFF Ada Generation")])).cards[0]["card"]
    'rtx-4000-sff-ada'
    """
    def records():
        for server, text in texts:
            rec: dict[str, Any] = {"id": server}
            if text is not None and not (isinstance(text, float) and text != text):  # NaN cell
                rec["description"] = text if isinstance(text, (list, str)) else str(text)
            yield rec
    return audit_records(records(), policy=policy, source=source, matcher=matcher)
