"""The small HTTP kit the table's pages (``web``) and the venue's board
(``venue``) both stand on: the door in front of uvicorn (``guard``), the one
server-sent-events helper (``sse``) and uvicorn on a thread of its own
(``serving``).  It imports only ``companion.core``, never web or venue."""
