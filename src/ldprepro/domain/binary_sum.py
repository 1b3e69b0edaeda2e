"""The exact law of a sum of binary reports, drawn without drawing every report.

Duchi's 1-D mechanism and Harmony (docs/mechanisms.md; paper 002 §3, paper 000 §3) report ±C, +C with
probability p_i = P(+C | x_i) = (1 + x_i/C)/2. A mean estimate needs only the sum of the reports,
C·(2S − n), where S = Σ_i B_i is the number of +C reports: a Poisson-binomial count. Its law depends
on the multiset of the p_i only, so the users can be sorted by p_i, once per data set.

**Blocks.** Write B_i = 1[u_i < p_i] with u_i uniform on [0, 1). Cut the sorted users into blocks of
:data:`BLOCK_USERS`; block j's p_i lie in [a_j, b_j] (its smallest and largest). Each user's u_i falls
in [0, a_j) (then B_i = 1 whatever p_i), in [a_j, b_j) (undecided) or in [b_j, 1) (then B_i = 0).
The u_i are independent, so per block

- the number below a_j is Binomial(m_j, a_j);
- of the others, whose u_i are uniform on [a_j, 1), the number below b_j is Binomial(rest,
  (b_j − a_j)/(1 − a_j));
- which users fall in which of the three intervals is, given how many fall in each, uniform over
  the assignments with those numbers (each user's u_i falls independently, with the same three
  probabilities), so the undecided users are a uniformly random subset of the block of that size;
- an undecided user's u_i is uniform on [a_j, b_j), so B_i = 1 with probability (p_i − a_j)/(b_j − a_j).

That is the law of S exactly (no approximation beyond the rounding of the comparisons, as in the
per-user sampler). The undecided users of all blocks together number at most BLOCK_USERS × (max p −
min p) on average, since the blocks' [a_j, b_j] do not overlap: at most BLOCK_USERS, whatever n is. A draw
costs two binomial draws per block and a uniform per undecided user, against a uniform per user for
the per-user sampler (measured in timing/records/binary_sums.md).

On subsets: a block's k undecided users are drawn as k uniform indices into the block
(``Generator.integers``), the later of two equal ones drawing again until all k differ. The procedure
looks only at which indices are equal, so it treats every index of the block alike, and a procedure
that does so and returns k distinct indices returns each k-subset with the same probability. When k
is more than half the block (a block whose users' p_i are far apart), ``Generator.choice(m_j, k,
replace=False)`` draws the subset instead.
"""

from __future__ import annotations

import numpy as np

#: Users per block. A constant (never tuned at run time): the random stream depends on it.
BLOCK_USERS = 1024
#: Callers draw a count by blocks from this many users on; below it one uniform per user is cheaper
#: (timing/records/binary_sums.md: at Adult's 48,842 users the two cost about the same). A constant too.
BLOCKS_FROM = 1 << 16


class BinaryCount:
    """The number of +C reports among users with P(+C) = ``p`` (any shape, flattened), drawn exactly
    by blocks of users sorted by p (module docstring). Prepared once per data set; each
    :meth:`sample` is one independent draw of the count."""

    def __init__(self, p):
        p = np.sort(np.asarray(p, dtype=float).reshape(-1))
        if p.size and not (0.0 <= p[0] and p[-1] <= 1.0):
            raise ValueError(f"P(+C) must lie in [0, 1], got {p[0]!r}..{p[-1]!r}")
        self.n = p.size
        self.p = p
        self.starts = np.arange(0, p.size, BLOCK_USERS)
        self.sizes = np.diff(np.append(self.starts, p.size))
        self.low = p[self.starts]
        self.high = p[self.starts + self.sizes - 1]
        self.width = self.high - self.low
        above = 1.0 - self.low
        # P(u < b | u ≥ a) = (b − a)/(1 − a); a block with a = 1 has b = 1: nobody undecided
        self.undecided_prob = np.divide(self.width, above, out=np.zeros_like(above), where=above > 0)

    def sample(self, rng: np.random.Generator) -> int:
        """One draw of Σ_i B_i."""
        if self.n == 0:
            return 0
        certain = rng.binomial(self.sizes, self.low)
        undecided = rng.binomial(self.sizes - certain, self.undecided_prob)
        total = int(certain.sum())
        blocks = np.flatnonzero(undecided)
        if blocks.size == 0:
            return total
        k = undecided[blocks]
        few = 2 * k <= self.sizes[blocks]  # else drawing again till all differ would take long
        small, large = blocks[few], blocks[~few]
        picks = [
            self.starts[small].repeat(k[few]) + _distinct(self.sizes[small].repeat(k[few]), small.repeat(k[few]), rng)
        ]
        for j in large:
            picks.append(self.starts[j] + rng.choice(self.sizes[j], undecided[j], replace=False))
        users = np.concatenate(picks)
        block = users // BLOCK_USERS
        v = rng.random(users.size)
        return total + int(np.count_nonzero(v * self.width[block] < self.p[users] - self.low[block]))


def _distinct(sizes: np.ndarray, blocks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """For each slot an index in [0, its block's size), distinct among the slots of one block (the
    slots of a block are consecutive and ``blocks`` names each slot's block): every slot draws
    uniformly; while two slots of a block hold the same index, the later ones draw again."""
    idx = rng.integers(0, sizes)
    while True:
        _, first = np.unique(blocks * BLOCK_USERS + idx, return_index=True)
        if first.size == idx.size:
            return idx
        again = np.ones(idx.size, dtype=bool)
        again[first] = False
        idx[again] = rng.integers(0, sizes[again])
