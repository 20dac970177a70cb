"""The table's web pages (a shell part: imports only ``companion.core``)."""
