"""bench.leaf_fit: the positions it records are whole rounds' (each labelled with the round's
winner, an active player), and the fitted model predicts them better than a uniform guess."""

from __future__ import annotations

import numpy as np

from bench import leaf_fit


def test_the_fitted_leaf_beats_a_uniform_guess_on_the_rounds_it_saw():
    x, mask, y = leaf_fit.positions(rounds=60, preset="mercyless", seed=7, every=2)
    assert x.shape[1:] == (4, len(leaf_fit.FEATURES)) and len(y) > 1000
    assert mask[np.arange(len(y)), y].all()  # the winner was in at every recorded position
    uniform = float(np.mean(np.log(mask.sum(axis=1))))
    w = leaf_fit.fit(x, mask, y)
    loss = leaf_fit.loss_grad_hess(w, x, mask, y)[0]
    assert loss < uniform - 0.005
    sizes = [leaf_fit.FEATURES.index(f) for f in leaf_fit.SIZE_FEATURES]
    assert leaf_fit.loss_grad_hess(leaf_fit.fit(x[:, :, sizes], mask, y), x[:, :, sizes], mask, y)[0] >= loss
