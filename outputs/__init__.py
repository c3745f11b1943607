"""What a debate becomes outside the journal: the HTML report, the JSON and Markdown exports
and their redaction. Above ``store`` (it reads the journal), below the interfaces."""
