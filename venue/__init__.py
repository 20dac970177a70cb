"""The venue: a separate process that hears every table on the broker, keeps
its own SQLite and shows one board (every table, tonight's and the season's
league).  It trusts no table: every payload is checked here (``schema``),
never by the tables' own builders (``mqtt/``), which it does not import."""
