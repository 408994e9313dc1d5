"""The domain's own part of the starter: what a payload must be (a pydantic model or a JSON Schema),
named by the template's PAYLOAD_MODEL or PAYLOAD_SCHEMA. The one folder of the functions that
differs per app: `onceflow init` writes a new app's own here."""
