"""Bot labels for tables (arena/core/labels.py): never two alike, never wider than asked, and
the part that tells names apart kept in view."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.cells import cell_len

from arena.core.labels import MIN_WIDTH, unique_labels


def test_the_same_name_twice_gets_two_labels_that_both_show_it():
    labels = unique_labels(["mybot", "random", "mybot"])
    assert len(set(labels)) == 3
    assert labels[1] == "random"
    assert all(lab.startswith("mybot") for lab in (labels[0], labels[2]))


def test_names_that_print_alike_get_two_labels():
    # a tab and its escape print the same once made safe (arena.core.text): still two labels
    labels = unique_labels(["a\tb", "a\\tb"])
    assert len(set(labels)) == 2


def test_long_names_differing_at_the_end_keep_the_end():
    base = "search-mcts-rollouts-1000-seed-0001-" + "x" * 21   # 57 characters
    names = [base + "-a", base + "-b", base + "-c"]             # 59 characters each
    assert all(len(n) == 59 for n in names)
    labels = unique_labels(names, 20)
    assert len(set(labels)) == 3
    for name, lab in zip(names, labels, strict=True):
        assert cell_len(lab) <= 20
        assert lab.endswith(name[-2:])                          # "-a", "-b", "-c"
        assert lab.startswith("search")                          # and the start, for people


def test_a_sixty_character_name_is_cut_to_a_unique_label_of_the_width():
    names = ["b" * 60, "b" * 59 + "c", "short"]
    for width in (8, 12, 30):
        labels = unique_labels(names, width)
        assert len(set(labels)) == 3
        assert all(cell_len(x) <= width for x in labels)
        assert labels[2] == "short"                             # what fits is not cut
        assert "…" in labels[0] and "…" in labels[1]


def test_long_names_differing_at_the_start_or_in_the_middle_stay_apart():
    start = ["alpha-" + "z" * 40, "omega-" + "z" * 40]
    assert len(set(unique_labels(start, 10))) == 2
    middle = ["p" * 25 + "1" + "q" * 25, "p" * 25 + "2" + "q" * 25, "p" * 25 + "3" + "q" * 25]
    labels = unique_labels(middle, 12)
    assert len(set(labels)) == 3
    for digit, lab in zip("123", labels, strict=True):
        assert digit in lab and cell_len(lab) <= 12


def test_no_width_never_cuts():
    names = ["n" * 64, "m" * 64]
    assert unique_labels(names) == names


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet="ab-.c", min_size=1, max_size=40), min_size=1, max_size=12),
       st.integers(min_value=MIN_WIDTH, max_value=30))
def test_any_names_any_width_labels_are_distinct_and_fit(names, width):
    labels = unique_labels(names, width)
    assert len(labels) == len(names)
    assert len(set(labels)) == len(labels)
    assert all(cell_len(x) <= width for x in labels)
