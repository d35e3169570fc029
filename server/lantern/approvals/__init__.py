"""Who may read what: the approver that decides each request from the mode, the globs
and remembered answers before it asks a person (`approver`), and the remembered grants
as the editor lists and revokes them (`grants`)."""
