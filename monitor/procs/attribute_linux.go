package procs

// attributeByEnviron reads /proc/PID/environ (the environment the process
// was started with) and attributes p by it.
func (s *scanner) attributeByEnviron(p *Proc) {
	environ, err := s.read(int32(p.PID), "environ")
	if err != nil {
		p.noteUnreadable("environ", err)
	}
	attributeByEnviron(p, parseEnviron(environ), "")
}
