package fixjournal

// Unfinished reports whether rec is a repair that did not get to its
// end: killed (no result), or stopped or failed with the environment
// left half-installed.
func (rec *JournalRecord) Unfinished() bool {
	if rec == nil {
		return false
	}
	if rec.Result == nil {
		return rec.Interrupted
	}
	return !rec.Result.Fixed && (rec.Result.Interrupted || len(rec.Result.Broken) > 0)
}
