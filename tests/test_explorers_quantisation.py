import torch

from attention_qa.explorers.quantisation import (
    BITS,
    GRANULARITIES,
    OUTLIERS,
    quantisation_explorer,
)
from attention_qa.quant import kv_attention_error, toy_tensors


def test_the_frame_budget_and_the_package():
    explorer = quantisation_explorer()
    assert len(BITS) * len(GRANULARITIES) * len(OUTLIERS) == 30
    frame = explorer.frame(bits=4, granularity="K per column, V per row",
                           outlier="×20 in one K channel")
    q, k, v, _ = toy_tensors(20.0)
    expected = kv_attention_error(q, k, v, 4, key_axis=-1, value_axis=-2)
    assert abs(frame.data["errors"]["output"] - expected["output"]) < 1e-12
    assert abs(frame.data["errors"]["K"] - expected["K"]) < 1e-12


def test_an_outlier_channel_ruins_per_row_keys_but_not_per_column_keys():
    explorer = quantisation_explorer()
    for bits in BITS:
        row = explorer.frame(bits=bits, granularity="per row", outlier="×20 in one K channel")
        col = explorer.frame(bits=bits, granularity="per column",
                             outlier="×20 in one K channel")
        clean = explorer.frame(bits=bits, granularity="per row", outlier="none")
        assert col.data["errors"]["output"] < row.data["errors"]["output"]
        assert clean.data["errors"]["output"] < row.data["errors"]["output"]
        # the weights have no outlier: their error does not move
        assert row.data["errors"]["W"] == clean.data["errors"]["W"]


def test_more_bits_less_error_and_the_map_is_k_error():
    explorer = quantisation_explorer()
    errors = [explorer.frame(bits=b, granularity="per tensor", outlier="none")
              .data["errors"]["W"] for b in BITS]
    assert errors == sorted(errors)
    frame = explorer.frame(bits=8, granularity="per column", outlier="none")
    assert frame.data["map"].shape == tuple(toy_tensors()[1].shape)
    assert torch.tensor(frame.data["map"]).max() < 0.1
