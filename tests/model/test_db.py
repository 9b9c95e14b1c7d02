"""The query engine: answers kept, circles answered as their least fixpoint whatever is
asked first, bounded depth, and forgetting what read a changed input."""
from __future__ import annotations

import itertools
import random

import pytest

from syncadvisor.model.db import MAX_OPEN, Db


def reachability(edges, track=False):
    """A query `reach(n)`: every node reachable from `n`, itself included."""
    db = Db(track=track)
    calls = []

    def compute(node):
        calls.append(node)
        db.depend(("node", node))
        found = {node}
        for target in edges.get(node, ()):
            found |= reach(target)
        return frozenset(found)

    reach = db.query("reach", compute, frozenset())
    return db, reach, calls


def closure(edges, node):
    seen, todo = {node}, [node]
    while todo:
        for target in edges.get(todo.pop(), ()):
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return frozenset(seen)


def test_an_answer_is_computed_once():
    _, reach, calls = reachability({1: [2], 2: [3]})
    assert reach(1) == {1, 2, 3}
    assert reach(2) == {2, 3}
    assert sorted(calls) == [1, 2, 3]


@pytest.mark.parametrize("seed", range(40))
def test_circles_are_answered_whatever_is_asked_first(seed):
    rng = random.Random(seed)
    nodes = list(range(12))
    edges = {n: rng.sample(nodes, rng.randint(0, 3)) for n in nodes}
    order = nodes[:]
    rng.shuffle(order)
    _, reach, _ = reachability(edges)
    for node in order:
        assert reach(node) == closure(edges, node), (edges, order, node)


def test_a_circle_inside_a_circle():
    edges = {0: [1], 1: [2, 0], 2: [3], 3: [2, 4], 4: [1]}
    for first in edges:
        _, reach, _ = reachability(edges)
        assert reach(first) == closure(edges, first)
        for node in edges:
            assert reach(node) == closure(edges, node)


def test_edges_that_depend_on_answers():
    """`pick(n)` follows `n`'s edges only to nodes that `reach` says reach node 9: an
    edge that appears once another answer grows (a monotone system)."""
    edges = {0: [1, 2], 1: [0], 2: [9], 9: []}
    db = Db()

    def compute_reach(node):
        found = {node}
        for target in edges.get(node, ()):
            found |= reach(target)
        return frozenset(found)

    def compute_pick(node):
        found = {node}
        for target in edges.get(node, ()):
            if 9 in reach(target):
                found |= pick(target)
        return frozenset(found)

    reach = db.query("reach", compute_reach, frozenset())
    pick = db.query("pick", compute_pick, frozenset())
    assert pick(1) == {0, 1, 2, 9}
    assert pick(0) == {0, 1, 2, 9}


def test_every_answer_of_a_circle_is_kept_after_its_last_round():
    edges = {n: [(n + 1) % 6] for n in range(6)}
    _, reach, calls = reachability(edges)
    reach(0)
    done = len(calls)
    for node in range(6):
        assert reach(node) == set(range(6))
    assert len(calls) == done  # nothing answered again


def test_a_long_chain_is_bounded():
    edges = {n: [n + 1] for n in range(3 * MAX_OPEN)}
    _, reach, _ = reachability(edges)
    found = reach(0)  # no RecursionError
    assert len(found) < 3 * MAX_OPEN


def test_forgetting_what_read_an_input():
    edges = {1: [2], 2: [3], 4: [3], 5: []}
    db, reach, calls = reachability(edges, track=True)
    for node in (1, 4, 5):
        reach(node)
    edges[3] = [5]
    db.changed([("node", 3)])
    calls.clear()
    assert reach(1) == {1, 2, 3, 5}
    assert reach(5) == {5}
    assert sorted(calls) == [1, 2, 3]  # reach(3), and 2 and 1 that read it; 5 holds
    assert reach(4) == {3, 4, 5}
    assert sorted(calls) == [1, 2, 3, 4]


@pytest.mark.parametrize("seed", range(20))
def test_forgetting_then_asking_again_matches_a_fresh_run(seed):
    rng = random.Random(seed)
    nodes = list(range(10))
    edges = {n: rng.sample(nodes, rng.randint(0, 3)) for n in nodes}
    db, reach, _ = reachability(edges, track=True)
    for node in nodes:
        reach(node)
    for _ in range(5):
        changed = rng.choice(nodes)
        edges[changed] = rng.sample(nodes, rng.randint(0, 3))
        db.changed([("node", changed)])
        for node in itertools.islice(itertools.cycle(rng.sample(nodes, 10)), 10):
            assert reach(node) == closure(edges, node)


@pytest.mark.parametrize("seed", range(60))
def test_answers_that_follow_other_answers_are_their_least_fixpoint(seed):
    """`pick(n)` follows an edge only to a node whose `reach` holds the goal: edges that
    appear as other answers grow, in circles of two queries."""
    rng = random.Random(seed)
    nodes = list(range(rng.randint(2, 8)))
    goal = nodes[-1]
    edges = {n: rng.sample(nodes, rng.randint(0, min(3, len(nodes)))) for n in nodes}
    db = Db()

    def compute_reach(node):
        found = {node}
        for target in edges[node]:
            found |= reach(target)
        return frozenset(found)

    def compute_pick(node):
        found = {node}
        for target in edges[node]:
            if goal in reach(target):
                found |= pick(target)
        return frozenset(found)

    reach = db.query("reach", compute_reach, frozenset())
    pick = db.query("pick", compute_pick, frozenset())
    picked = {n: {t for t in edges[n] if goal in closure(edges, t)} for n in nodes}
    order = nodes[:]
    rng.shuffle(order)
    for node in order:
        assert pick(node) == closure(picked, node)
