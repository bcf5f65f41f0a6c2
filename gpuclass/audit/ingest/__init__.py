"""Reading audit inputs: files, directories, archives and compressed streams (with their
limits), the kind of each input, and one reader per kind.

- :mod:`.kinds`: the table of input kinds, told by content and name; why a member is skipped;
- :mod:`.streams`, :mod:`.compressed`, :mod:`.archives`: bytes as they are read, bounded;
- :mod:`.text`, :mod:`.records` (feeds, NDJSON), :mod:`.csv`, :mod:`.parquet`: the readers;
- :mod:`.columns`: the column names and aliases of every input, once;
- :mod:`.arrow`: the one place that turns any Arrow or pandas column into the columns the
  device engine reads, or refuses it.
"""
