"""Full-text search: ranking, snippets, filters, unsafe query text, index upkeep."""

from typing import Any

import pytest

from smith_tui.store import MessageHit, Store, search
from smith_tui.store.search import to_match_expression


def say(store: Store, cid: str, *texts: str) -> list[int]:
    return store.conversations.append_messages(cid, [{"role": "user", "content": t} for t in texts])


def test_ranking_puts_the_denser_match_first(store: Store) -> None:
    cid = store.conversations.create("p")
    say(
        store,
        cid,
        "the weather is nice and the sea is calm today in the harbour town",
        "kubernetes kubernetes kubernetes rollout",
        "we talked about kubernetes once among many other unrelated words here",
    )
    hits = store.search_messages("kubernetes")
    assert [h.position for h in hits] == [1, 2]
    assert hits[0].rank < hits[1].rank  # bm25: lower is better
    assert all(h.conversation_id == cid and h.role == "user" for h in hits)


def test_snippet_highlights_the_match(store: Store) -> None:
    cid = store.conversations.create("p")
    words = " ".join(f"filler{i}" for i in range(40))
    say(store, cid, f"{words} the deploy failed {words}")
    (hit,) = store.search_messages("deploy")
    assert "«deploy»" in hit.snippet
    assert hit.snippet.startswith("…") and hit.snippet.endswith("…")
    assert len(hit.snippet) < 200
    (custom,) = store.search_messages("deploy", highlight=("<b>", "</b>"))
    assert "<b>deploy</b>" in custom.snippet


def test_filters_by_project_and_conversation(store: Store) -> None:
    a1 = store.conversations.create("proj-a")
    a2 = store.conversations.create("proj-a")
    b1 = store.conversations.create("proj-b")
    for cid in (a1, a2, b1):
        say(store, cid, "shared needle text")
    assert {h.conversation_id for h in store.search_messages("needle")} == {a1, a2, b1}
    assert {h.conversation_id for h in store.search_messages("needle", project_id="proj-a")} == {
        a1,
        a2,
    }
    assert [h.conversation_id for h in store.search_messages("needle", conversation_id=a2)] == [a2]
    assert store.search_messages("needle", project_id="proj-b", conversation_id=a1) == []
    assert len(store.search_messages("needle", limit=2)) == 2


def test_phrases_prefixes_and_or(store: Store) -> None:
    cid = store.conversations.create("p")
    say(store, cid, "red apple pie", "apple red juice", "green pear", "deployment done")
    assert [h.position for h in store.search_messages('"red apple"')] == [0]
    assert {h.position for h in store.search_messages("red apple")} == {0, 1}
    assert [h.position for h in store.search_messages("deploy*")] == [3]
    assert {h.position for h in store.search_messages("pear OR juice")} == {1, 2}
    assert store.search_messages("deploy") == []


@pytest.mark.parametrize(
    "query",
    [
        '"unbalanced',
        'say "hi',
        "a AND",
        "OR",
        "NOT",
        "(",
        ")",
        "*",
        "col:umn",
        "content:needle",
        "^needle",
        "NEAR(a b)",
        "-needle",
        "needle OR",
        '""',
        "   ",
        "'; DROP TABLE messages; --",
        "{a b}",
        "a + b",
    ],
)
def test_any_query_text_is_safe(store: Store, query: str) -> None:
    cid = store.conversations.create("p")
    say(store, cid, "needle in a haystack with a and b and column", "say hi to everyone")
    hits = store.search_messages(query)  # must not raise
    assert all(h.conversation_id == cid for h in hits)
    assert store.conversations.count_messages(cid) == 2


def test_unsafe_queries_still_find_their_words(store: Store) -> None:
    cid = store.conversations.create("p")
    say(store, cid, "the needle is here", "say hi to everyone")
    assert [h.position for h in store.search_messages('say "hi')] == [1]
    # "content:needle" is the phrase "content needle" here, not a column filter.
    assert store.search_messages("content:needle") == []
    assert [h.position for h in store.search_messages("(needle)")] == [0]
    assert store.search_messages("...") == []


def test_match_expression_quotes_every_term() -> None:
    assert to_match_expression('foo "bar baz" qu"x') == '"foo" AND "bar baz" AND "qu" AND "x"'
    assert to_match_expression("deploy* OR ship") == '("deploy"* OR "ship")'
    assert to_match_expression('a"b"c') == '"a" AND "b" AND "c"'
    assert to_match_expression("!!! ---") is None


def test_index_follows_updates_deletes_and_cascades(store: Store) -> None:
    cid = store.conversations.create("p")
    say(store, cid, "original words", "keep this")
    first = store.conversations.list_messages(cid)[0]
    store.conversations.update_message(first.id, content="replacement text")
    assert store.search_messages("original") == []
    assert [h.message_id for h in store.search_messages("replacement")] == [first.id]
    store.conversations.delete_message(first.id)
    assert store.search_messages("replacement") == []
    store.conversations.delete(cid)
    assert store.search_messages("keep") == []
    # Raises if the index disagrees with the messages table.
    store.database.execute_sql(
        "INSERT INTO message_search (message_search, rank) VALUES ('integrity-check', 1)"
    )


def test_rebuild_restores_a_damaged_index(store: Store) -> None:
    cid = store.conversations.create("p")
    say(store, cid, "alpha beta", "gamma")
    store.project_memory.put("proj", "n1", "delta epsilon")
    store.database.execute_sql("INSERT INTO message_search (message_search) VALUES ('delete-all')")
    store.database.execute_sql(
        "INSERT INTO project_memory_search (project_memory_search) VALUES ('delete-all')"
    )
    assert store.search_messages("alpha") == []
    assert store.search_project_memory("delta", "proj") == []
    store.rebuild_message_search_index()
    store.rebuild_project_memory_search_index()
    assert [h.position for h in store.search_messages("alpha")] == [0]
    assert [h.note_id for h in store.search_project_memory("delta", "proj")] == ["n1"]


def test_project_memory_search(store: Store) -> None:
    store.project_memory.put("proj", "testing", "run pytest with the scripted server")
    store.project_memory.put("proj", "style", "ruff format before commit; pytest too")
    store.project_memory.put("other", "testing", "pytest everywhere")
    hits = store.search_project_memory("pytest", "proj")
    assert {h.note_id for h in hits} == {"testing", "style"}
    assert all(h.project_id == "proj" for h in hits)
    assert any("«pytest»" in h.snippet for h in hits)
    assert [h.note_id for h in store.search_project_memory("scripted", "proj")] == ["testing"]
    assert [h.note_id for h in store.search_project_memory("style", "proj")] == ["style"]  # note id
    store.project_memory.put("proj", "testing", "nothing about it now")
    assert [h.note_id for h in store.search_project_memory("scripted", "proj")] == []
    store.project_memory.delete("proj", "style")
    assert store.search_project_memory("pytest", "proj") == []
    assert store.search_project_memory('"', "proj") == []


def test_project_filter_is_exact_even_when_ids_tokenise_alike(store: Store) -> None:
    ids = {
        project: store.conversations.create(project) for project in ("proj-a", "proj-a-b", "___")
    }
    for cid in ids.values():
        say(store, cid, "common needle")
    for project, cid in ids.items():
        assert [h.conversation_id for h in store.search_messages("needle", project_id=project)] == [
            cid
        ]
    assert store.search_messages("needle", project_id="proj") == []


def test_words_of_a_project_id_do_not_match_as_content(store: Store) -> None:
    cid = store.conversations.create("zanzibar")
    say(store, cid, "nothing special")
    assert store.search_messages("zanzibar") == []
    assert [h.conversation_id for h in store.search_messages("special")] == [cid]


def test_very_common_terms_are_ranked_among_the_newest_matches(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search, "RANK_WINDOW", 3)
    mine = store.conversations.create("mine")
    other = store.conversations.create("other")
    # The oldest message is the best bm25 match, then four newer, weaker ones.
    say(store, mine, "apple apple apple apple")
    say(store, mine, *[f"apple with filler words number {i} and more filler" for i in range(4)])
    positions = [h.position for h in store.search_messages("apple")]
    assert sorted(positions) == [2, 3, 4]  # the newest three only
    say(store, other, *[f"apple elsewhere {i} filler filler filler" for i in range(5)])
    assert {h.conversation_id for h in store.search_messages("apple")} == {other}
    # A filter picks the window among its own matches.
    assert sorted(h.position for h in store.search_messages("apple", project_id="mine")) == [
        2,
        3,
        4,
    ]
    assert sorted(h.position for h in store.search_messages("apple", conversation_id=mine)) == [
        2,
        3,
        4,
    ]
    monkeypatch.setattr(search, "RANK_WINDOW", 1000)
    assert store.search_messages("apple", project_id="mine")[0].position == 0


def test_conversation_filter_with_interleaved_conversations(store: Store) -> None:
    first = store.conversations.create("p")
    second = store.conversations.create("p")
    for i in range(3):
        say(store, first, f"topic mention {i} with padding words here")
        say(store, second, "topic topic topic")  # ranks above every message of `first`
    hits = store.search_messages("topic", conversation_id=first)
    assert [h.conversation_id for h in hits] == [first] * 3
    assert [h.position for h in store.search_messages("topic", conversation_id=second)] == [0, 1, 2]


def test_ties_in_rank_go_to_the_older_message(store: Store) -> None:
    cid = store.conversations.create("p")
    say(store, cid, *["identical words in every message"] * 5)
    hits = store.search_messages("identical")
    assert len({h.rank for h in hits}) == 1
    assert [h.position for h in hits] == [0, 1, 2, 3, 4]
    assert [h.position for h in store.search_messages("identical", limit=2)] == [0, 1]


@pytest.mark.parametrize(
    ("query", "marked"),
    [
        ("deploy", "«deploy»"),
        ('"deploy failed"', "«deploy failed»"),
        ("deploy-failed", "«deploy failed»"),
        ("depl*", "«deploy»"),
        ("nothing OR failed", "«failed»"),
    ],
)
def test_snippets_of_every_kind_of_query_and_filter(store: Store, query: str, marked: str) -> None:
    mine = store.conversations.create("mine")
    other = store.conversations.create("other")
    words = " ".join(f"filler{i}" for i in range(40))
    for cid in (mine, other, mine):
        say(store, cid, f"{words} the deploy failed {words}", "unrelated text")
    filters: list[dict[str, str]] = [{}, {"project_id": "mine"}, {"conversation_id": other}]
    for kwargs in filters:
        hits = store.search_messages(query, **kwargs)
        assert hits, kwargs
        assert all(marked in h.snippet and h.snippet.startswith("…") for h in hits)


def test_has_phrase() -> None:
    assert search._has_phrase('"red apple"')
    assert search._has_phrase("red-apple")
    assert search._has_phrase('plain "red apple" words')
    assert not search._has_phrase("red apple")
    assert not search._has_phrase("deploy* OR ship")
    assert not search._has_phrase('"red"')


@pytest.mark.parametrize("query", ["needle", '"needle here"', "need*"])
def test_many_hits_get_their_snippets_in_batches(
    store: Store, monkeypatch: pytest.MonkeyPatch, query: str
) -> None:
    monkeypatch.setattr(search, "_SNIPPET_BATCH", 2)
    cid = store.conversations.create("p")
    say(store, cid, *[f"needle here number {i}" for i in range(7)])
    hits = store.search_messages(query, limit=100)
    assert sorted(h.position for h in hits) == list(range(7))
    assert all("«need" in h.snippet for h in hits)


def test_a_message_deleted_after_ranking_is_left_out(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    cid = store.conversations.create("p")
    say(store, cid, "needle one", "needle two", "needle three")
    ids = [m.id for m in store.conversations.list_messages(cid)]
    original = search._snippets

    def deleted_meanwhile(*args: Any, **kwargs: Any) -> dict[int, str]:
        store.conversations.delete_message(ids[1])
        return original(*args, **kwargs)

    monkeypatch.setattr(search, "_snippets", deleted_meanwhile)
    assert sorted(h.message_id for h in store.search_messages("needle")) == [ids[0], ids[2]]


def test_project_filter_gives_the_same_hits_checked_per_match_or_in_the_index(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    projects = ("proj-a", "proj-a-b", "___", "zanzibar")
    for number, project in enumerate(projects):
        cid = store.conversations.create(project)
        say(
            store,
            cid,
            *[f"needle {'thread ' * (i % 3)}in project {number} message {i}" for i in range(6)],
        )
    queries = ["needle", "needle thread", "thread", "proj*", "needle OR message", "project"]
    cases = [(q, p, limit) for q in queries for p in projects for limit in (2, 20)]

    def results() -> list[list[MessageHit]]:
        return [store.search_messages(q, project_id=p, limit=n) for q, p, n in cases]

    monkeypatch.setattr(search, "FEW_MATCHES", 1000)  # check each match's project
    per_match = results()
    monkeypatch.setattr(search, "FEW_MATCHES", 0)  # narrow inside FTS5
    assert results() == per_match
    assert all(per_match)
    for (_, project, _), hits in zip(cases, per_match, strict=True):
        conversations = {store.conversations.get(h.conversation_id).project_id for h in hits}
        assert conversations <= {project}


def test_has_at_most(store: Store) -> None:
    cid = store.conversations.create("p")
    say(store, cid, "needle one", "needle two", "needle three")
    fts, params = ["message_search MATCH ?"], ['"needle"']
    assert search._has_at_most(store.database, fts, params, 3)
    assert not search._has_at_most(store.database, fts, params, 2)


CONTROL_CHARS = [chr(code) for code in (*range(0x20), 0x7F)]


@pytest.mark.parametrize("char", CONTROL_CHARS, ids=lambda char: f"U+{ord(char):04X}")
def test_control_characters_separate_words(store: Store, char: str) -> None:
    # A NUL used to end FTS5's view of the query ("unterminated string"); every control
    # character now splits words the way a space does, in messages and in project memory.
    cid = store.conversations.create("p")
    say(store, cid, "the needle in the haystack", "say hi to everyone")
    store.project_memory.put("p", "found", "a needle in the haystack")
    for query in (
        char,
        f"needle{char}",
        f"{char}needle",
        f"needle{char}haystack",
        f'"needle{char}in"',
        f"{char}need*{char}",
        f"hi{char}OR{char}needle",
        f"{char}({char}needle{char})",
    ):
        expected = [] if query == char else [0]
        if "OR" in query:
            expected = [0, 1]
        assert sorted(h.position for h in store.search_messages(query)) == expected, repr(query)
        assert sorted(h.position for h in store.search_messages(query, project_id="p")) == (
            expected
        )
        notes = store.search_project_memory(query, "p")
        assert [h.note_id for h in notes] == ([] if query == char else ["found"]), repr(query)
    assert to_match_expression(f"needle{char}haystack") == '"needle" AND "haystack"'


@pytest.mark.parametrize(
    ("query", "finds"),
    [
        ("'", False),
        ("''", False),
        ('"', False),
        ('"""', False),
        ("needle'", True),
        ("(", False),
        ("((needle", True),
        ("needle))", True),
        ("NEAR(needle", False),  # one term: the phrase "near needle"
        ("needle ( ) NEAR", False),  # NEAR is a word here, not an operator
        ("needle AND OR NOT", False),  # AND and NOT are words, only OR is an operator
        ("needle OR NOT", True),
        ("{needle", True),
        ("needle^", True),
        ("needle:", True),
        ("needle\\", True),
        ("needle\ud800", True),
        ("needle\x85\x9f", True),
        ("\x00\x00", False),
    ],
)
def test_stray_operators_quotes_and_brackets_are_harmless(
    store: Store, query: str, finds: bool
) -> None:
    cid = store.conversations.create("p")
    say(store, cid, "needle in a haystack")
    store.project_memory.put("p", "n", "needle")
    assert [h.position for h in store.search_messages(query)] == ([0] if finds else [])
    assert [h.note_id for h in store.search_project_memory(query, "p")] == (["n"] if finds else [])


def test_a_nul_inside_stored_text_is_a_word_break(store: Store) -> None:
    cid = store.conversations.create("p")
    say(store, cid, "before\x00after")
    assert [h.position for h in store.search_messages("after")] == [0]
    assert [h.position for h in store.search_messages("before\x00after")] == [0]
