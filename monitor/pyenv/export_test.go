package pyenv

import "slices"

// Managers is the managers table, in the order its readers consult it,
// for the external tests that hold every entry to its rules.
func Managers() []Manager { return slices.Clone(managers) }
