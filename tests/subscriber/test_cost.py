"""The subscriber's cost per event (onceflow/devtools/cost/subscriber.py) is priced from what it
measurably did on the embedded engine: one transaction of two items for a new event, a cancelled
transaction and a consistent read of the marker for a duplicate."""

from __future__ import annotations

from onceflow.devtools.cost.prices import load_prices
from onceflow.devtools.cost.subscriber import delivery_cost, measure_deliveries, per_event_cost


def test_the_subscriber_cost_is_priced_from_its_measured_calls(subscriber_stack):
    deliveries = measure_deliveries(subscriber_stack)
    new = [(c.action, c.write_units, c.read_units) for c in deliveries["new"].by_subscriber()]
    duplicate = [(c.action, c.succeeded, c.read_units) for c in deliveries["duplicate"].by_subscriber()]
    assert new == [("TransactWriteItems", 4.0, 0.0)]  # marker + account, 2 write units each
    assert duplicate == [("TransactWriteItems", False, 0.0), ("GetItem", True, 1.0)]
    prices = load_prices()
    new_cost, duplicate_cost = delivery_cost(deliveries["new"], prices), delivery_cost(deliveries["duplicate"], prices)
    assert new_cost.parts["DynamoDB"] == 4 * prices["dynamodb_on_demand_per_write_unit"]
    per_event = per_event_cost(deliveries, duplicates_per_event=0.5, prices=prices)
    assert abs(per_event.total - (new_cost.total + 0.5 * duplicate_cost.total)) < 1e-12
