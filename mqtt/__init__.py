"""The table on an MQTT broker (a shell part: imports only ``companion.core``
and paho): its status, public state, TABLE events and finished plays under
``companion/<table_id>/`` (DESIGN.md, *MQTT*)."""
