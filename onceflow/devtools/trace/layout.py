"""A layered (Sugiyama-style) drawing of a directed graph, top to bottom, computed in Python.

1. edges that close a cycle (found by depth-first search from the first node) are turned around;
2. every node goes on the layer after its deepest predecessor (longest path);
3. an edge spanning several layers gets a dummy point on each layer it crosses;
4. layers are ordered by barycentre sweeps and adjacent swaps, keeping the fewest crossings;
5. x positions pull each node towards its neighbours, keeping the order and the spacing
   (an isotonic regression per layer, pool-adjacent-violators);
6. each edge becomes a list of points: a port on its source, the dummies, a port on its target.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from dataclasses import dataclass, field

Point = tuple[float, float]

LAYER_GAP = 52.0
NODE_GAP = 30.0
DUMMY_GAP = 14.0
MARGIN = 24.0
_SWEEPS = 24


@dataclass(frozen=True)
class Box:
    """A node's drawn box, plus room it needs beside it (a retry loop, annotations)."""

    width: float
    height: float
    left: float = 0.0
    right: float = 0.0
    tall: float = 0.0  # height taken beside the box (annotations), when more than the box


@dataclass
class Route:
    points: list[Point]
    label_at: Point


@dataclass
class Layout:
    centers: dict[str, float]  # x of each node's centre
    tops: dict[str, float]  # y of each node's top
    routes: dict[str, Route]
    width: float
    height: float
    layers: dict[str, int] = field(default_factory=dict)


def _back_edges(nodes: list[str], edges: list[tuple[str, str, str]]) -> set[str]:
    outgoing: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for key, source, target in edges:
        outgoing[source].append((key, target))
    state: dict[str, int] = {}  # 1 on the stack, 2 done
    back: set[str] = set()
    for root in nodes:
        if root in state:
            continue
        state[root] = 1
        stack = [(root, iter(outgoing[root]))]
        while stack:
            node, children = stack[-1]
            for key, child in children:
                if state.get(child) == 1:
                    back.add(key)
                elif child not in state:
                    state[child] = 1
                    stack.append((child, iter(outgoing[child])))
                    break
            else:
                state[node] = 2
                stack.pop()
    return back


def _longest_path_layers(nodes: list[str], dag: list[tuple[str, str, str]]) -> dict[str, int]:
    predecessors: dict[str, list[str]] = defaultdict(list)
    indegree = dict.fromkeys(nodes, 0)
    for _, source, target in dag:
        predecessors[target].append(source)
        indegree[target] += 1
    successors: dict[str, list[str]] = defaultdict(list)
    for _, source, target in dag:
        successors[source].append(target)
    layer: dict[str, int] = {}
    ready = [n for n in nodes if indegree[n] == 0]
    while ready:
        node = ready.pop(0)
        layer[node] = max((layer[p] + 1 for p in predecessors[node]), default=0)
        for child in successors[node]:
            indegree[child] -= 1
            if indegree[child] == 0:
                ready.append(child)
    return layer


class _Layered:
    """The layered graph with dummies, and the work on it."""

    def __init__(self, nodes: list[str], dag: list[tuple[str, str, str]], layer: dict[str, int]):
        self.layer = dict(layer)
        self.chains: dict[str, list[str]] = {}
        self.up: dict[str, list[str]] = defaultdict(list)
        self.down: dict[str, list[str]] = defaultdict(list)
        self.rows: list[list[str]] = [[] for _ in range(max(layer.values(), default=0) + 1)]
        for node in nodes:
            self.rows[layer[node]].append(node)
        for key, source, target in dag:
            chain = [source]
            for depth in range(layer[source] + 1, layer[target]):
                dummy = f"{key}#{depth}"
                self.layer[dummy] = depth
                self.rows[depth].append(dummy)
                chain.append(dummy)
            chain.append(target)
            for a, b in itertools.pairwise(chain):
                self.down[a].append(b)
                self.up[b].append(a)
            self.chains[key] = chain

    def position(self) -> dict[str, int]:
        return {node: index for row in self.rows for index, node in enumerate(row)}

    def _between(self, upper: int) -> int:
        """Crossings between layer `upper` and the one below it."""
        if upper < 0 or upper + 1 >= len(self.rows):
            return 0
        below = {node: index for index, node in enumerate(self.rows[upper + 1])}
        pairs = [(i, below[b]) for i, a in enumerate(self.rows[upper]) for b in self.down[a]]
        return sum(1 for k, (a, b) in enumerate(pairs) for c, d in pairs[k + 1 :] if (a - c) * (b - d) < 0)

    def crossings(self) -> int:
        return sum(self._between(i) for i in range(len(self.rows) - 1))

    def order(self) -> None:
        best, best_rows = self.crossings(), [list(r) for r in self.rows]
        for sweep in range(_SWEEPS):
            downward = sweep % 2 == 0
            indices = range(1, len(self.rows)) if downward else range(len(self.rows) - 2, -1, -1)
            for i in indices:
                where = self.position()
                neighbours = self.up if downward else self.down
                row = self.rows[i]

                def barycentre(node: str, where: dict[str, int] = where, neighbours: dict = neighbours) -> float:
                    linked = neighbours[node]
                    return sum(where[n] for n in linked) / len(linked) if linked else where[node]

                row.sort(key=barycentre)
            self._transpose()
            count = self.crossings()
            if count < best:
                best, best_rows = count, [list(r) for r in self.rows]
        self.rows = best_rows

    def _transpose(self) -> None:
        improved, passes = True, 0
        while improved and passes < 8:
            improved, passes = False, passes + 1
            for depth, row in enumerate(self.rows):
                for i in range(len(row) - 1):
                    before = self._between(depth - 1) + self._between(depth)
                    row[i], row[i + 1] = row[i + 1], row[i]
                    if self._between(depth - 1) + self._between(depth) < before:
                        improved = True
                    else:
                        row[i], row[i + 1] = row[i + 1], row[i]


def _isotonic(targets: list[float], weights: list[float], gaps: list[float]) -> list[float]:
    """Positions closest to `targets` (weighted least squares) with x[i+1] - x[i] >= gaps[i]."""
    offsets = [0.0]
    for gap in gaps:
        offsets.append(offsets[-1] + gap)
    blocks: list[list[float]] = []  # [value, weight, size]
    for target, weight, offset in zip(targets, weights, offsets, strict=True):
        blocks.append([target - offset, weight, 1])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            value, w, size = blocks.pop()
            last = blocks[-1]
            last[0] = (last[0] * last[1] + value * w) / (last[1] + w)
            last[1] += w
            last[2] += size
    values = [value for value, _, size in blocks for _ in range(int(size))]
    return [v + o for v, o in zip(values, offsets, strict=True)]


def layout(nodes: list[str], boxes: dict[str, Box], edges: list[tuple[str, str, str]]) -> Layout:
    """`edges` are (key, source, target); loops onto the same node are left to the caller."""
    edges = [e for e in edges if e[1] != e[2]]
    back = _back_edges(nodes, edges)
    dag = [(key, t, s) if key in back else (key, s, t) for key, s, t in edges]
    graph = _Layered(nodes, dag, _longest_path_layers(nodes, dag))
    graph.order()

    def extent(node: str, side: str) -> float:
        box = boxes.get(node)
        if box is None:
            return 3.0
        return box.width / 2 + (box.left if side == "left" else box.right)

    def gap(a: str, b: str) -> float:
        spacing = NODE_GAP if a in boxes and b in boxes else DUMMY_GAP
        return extent(a, "right") + extent(b, "left") + spacing

    x: dict[str, float] = {}
    for row in graph.rows:
        position = 0.0
        for i, node in enumerate(row):
            position += gap(row[i - 1], node) if i else 0.0
            x[node] = position
    for sweep in range(_SWEEPS * 2):
        downward = sweep % 2 == 0
        rows = graph.rows if downward else list(reversed(graph.rows))
        for row in rows:
            targets, weights = [], []
            for node in row:
                linked = (graph.up if downward else graph.down)[node] or graph.up[node] + graph.down[node]
                targets.append(sum(x[n] for n in linked) / len(linked) if linked else x[node])
                weights.append(1.0 if node in boxes else 4.0)
            gaps = [gap(a, b) for a, b in itertools.pairwise(row)]
            for node, value in zip(row, _isotonic(targets, weights, gaps), strict=True):
                x[node] = value
    shift = MARGIN - min(x[n] - extent(n, "left") for n in x)
    x = {n: v + shift for n, v in x.items()}

    tops, heights, y = [], [], MARGIN
    for row in graph.rows:
        height = max((max(boxes[n].height, boxes[n].tall) for n in row if n in boxes), default=LAYER_GAP / 2)
        tops.append(y)
        heights.append(height)
        y += height + LAYER_GAP
    node_top = {n: tops[graph.layer[n]] for n in nodes}
    routes = _routes(graph, boxes, x, node_top, tops, heights, back)
    width = max(x[n] + extent(n, "right") for n in x) + MARGIN
    return Layout({n: x[n] for n in nodes}, node_top, routes, width, y - LAYER_GAP + MARGIN, dict(graph.layer))


def _routes(
    graph: _Layered,
    boxes: dict[str, Box],
    x: dict[str, float],
    node_top: dict[str, float],
    tops: list[float],
    heights: list[float],
    back: set[str],
) -> dict[str, Route]:
    bottom_ports: dict[str, list[tuple[float, str]]] = defaultdict(list)
    top_ports: dict[str, list[tuple[float, str]]] = defaultdict(list)
    for key, chain in graph.chains.items():
        bottom_ports[chain[0]].append((x[chain[1]], key))
        top_ports[chain[-1]].append((x[chain[-2]], key))

    def spread(ports: dict[str, list[tuple[float, str]]]) -> dict[tuple[str, str], float]:
        placed = {}
        for node, attached in ports.items():
            attached.sort()
            step = min(16.0, boxes[node].width * 0.7 / max(len(attached) - 1, 1))
            for i, (_, key) in enumerate(attached):
                placed[(node, key)] = x[node] + (i - (len(attached) - 1) / 2) * step
        return placed

    out_x, in_x = spread(bottom_ports), spread(top_ports)
    routes = {}
    for key, chain in graph.chains.items():
        source, target = chain[0], chain[-1]
        points: list[Point] = [(out_x[(source, key)], node_top[source] + boxes[source].height)]
        for dummy in chain[1:-1]:
            depth = graph.layer[dummy]
            points += [(x[dummy], tops[depth]), (x[dummy], tops[depth] + heights[depth])]
        points.append((in_x[(target, key)], node_top[target]))
        dummies = chain[1:-1]
        if dummies:
            middle = dummies[len(dummies) // 2]
            label = (x[middle], tops[graph.layer[middle]] + heights[graph.layer[middle]] / 2)
        else:
            label = ((points[0][0] + points[-1][0]) / 2, (points[0][1] + points[-1][1]) / 2)
        routes[key] = Route(list(reversed(points)) if key in back else points, label)
    return routes
