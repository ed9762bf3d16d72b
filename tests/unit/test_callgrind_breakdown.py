"""benchmarks/callgrind_breakdown.py: parts read from callgrind_annotate's text, per request."""

from benchmarks import callgrind_breakdown as cb

SHORT = """\
--------------------------------------------------------------------------------
Ir
--------------------------------------------------------------------------------
60,000,000 (100.0%)  PROGRAM TOTALS
20,000,000 (33.33%)  ???:_engine::api::execute::AsyncExecute::__call__ [/x/_engine.so]
 1,000,000 ( 1.67%)  ???:_engine::api::execute::AsyncExecute::__call__'2 [/x/_engine.so]
"""
LONG = """\
240,000,000 (100.0%)  PROGRAM TOTALS
 80,000,000 (33.33%)  ???:_engine::api::execute::AsyncExecute::__call__ [/x/_engine.so]
"""


def test_each_part_is_the_difference_of_its_inclusive_counts_per_request():
    parts = cb.breakdown(cb.parse(SHORT), cb.parse(LONG), 2000, 8000)
    assert parts["whole client"] == 30000
    # The first matching row, not a recursive one ('2) of the same name.
    assert parts["execute_async"] == 10000
    # A function in neither dump counts 0.
    assert parts["handing it to the runtime"] == 0
