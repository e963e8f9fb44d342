"""Pytrees: nested lists, tuples and dicts (and None) with tensors or other values at the
leaves. flatten returns the leaves in a fixed order (dict keys sorted) and a treedef that
unflatten uses to rebuild the structure; treedefs are hashable and compare equal for equal
structures, so transforms can cache one compiled function per structure."""


def flatten(tree):
    leaves = []

    def walk(node):
        if isinstance(node, dict):
            keys = sorted(node)
            return ("dict", tuple(keys), tuple(walk(node[k]) for k in keys))
        if isinstance(node, (list, tuple)):
            return (type(node).__name__, len(node), tuple(walk(v) for v in node))
        if node is None:
            return ("none",)
        leaves.append(node)
        return ("leaf",)

    return leaves, walk(tree)


def unflatten(treedef, leaves):
    it = iter(leaves)

    def build(d):
        tag = d[0]
        if tag == "leaf":
            return next(it)
        if tag == "none":
            return None
        if tag == "dict":
            return {k: build(c) for k, c in zip(d[1], d[2])}
        children = [build(c) for c in d[2]]
        return children if tag == "list" else tuple(children)

    out = build(treedef)
    rest = list(it)
    if rest:
        raise ValueError(f"unflatten: {len(rest)} leaves left over")
    return out


def tree_map(fn, tree, *rest):
    """fn applied leafwise to `tree` (and the matching leaves of `rest`, same structure)."""
    leaves, treedef = flatten(tree)
    others = []
    for r in rest:
        rl, rd = flatten(r)
        if rd != treedef:
            raise ValueError("tree_map: the trees have different structures")
        others.append(rl)
    return unflatten(treedef, [fn(*xs) for xs in zip(leaves, *others)])
