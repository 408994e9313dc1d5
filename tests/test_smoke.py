from onceflow.ops.observe import scan
from tests.support import order, run_execution


def test_new_event_writes_once_publishes_and_marks_sent(stack, inbox):
    result = run_execution(stack, order("order-1"), name="first")
    assert result.status == "SUCCEEDED"
    assert result.path == ["Record event and business item", "Publish notification", "Mark as sent"]
    dynamodb = stack.client("dynamodb")
    assert [r["status"] for r in scan(dynamodb, stack.processed_events_table)] == ["sent"]
    assert [r["order_id"] for r in scan(dynamodb, stack.business_table)] == ["order-1"]
    assert inbox.by_event_id() == {"order-1": 1}
