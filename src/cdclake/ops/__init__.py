"""Operating a target: status, quarantine inspection and replay, the HTML report and its charts."""
