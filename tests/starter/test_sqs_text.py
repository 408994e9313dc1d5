"""Which characters a dead letter's attributes replace (onceflow_common.dead_letters.string_attribute):
every code point outside the set SQS accepts in bodies and attribute values, #x9 | #xA | #xD |
#x20-#xD7FF | #xE000-#xFFFD | #x10000-#x10FFFF (the XML 1.0 characters:
https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessage.html), and
no other."""

from __future__ import annotations

from onceflow_common.dead_letters import string_attribute


def _accepted(code: int) -> bool:
    return code in (0x9, 0xA, 0xD) or 0x20 <= code <= 0xD7FF or 0xE000 <= code <= 0xFFFD or 0x10000 <= code <= 0x10FFFF


def test_every_code_point_is_kept_or_replaced_as_sqs_accepts_it() -> None:
    every = "".join(chr(code) for code in range(0x110000))
    replaced = string_attribute(every)["StringValue"]
    assert len(replaced) == len(every)
    kept = [code for code in range(0x110000) if replaced[code] == every[code]]
    assert kept == [code for code in range(0x110000) if _accepted(code)]
    assert all(replaced[code] == "\ufffd" for code in range(0x110000) if not _accepted(code))
