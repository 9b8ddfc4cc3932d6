package tray

// sideQueue holds work for a desktop side effect served by another process
// (the clipboard tool, the notification service). One goroutine does it in
// order, off the tray's loop, so a service that hangs stalls only its own
// queue; a full queue refuses more rather than block the loop.
type sideQueue[T any] chan T

// offer queues v, or reports false when the queue is full.
func (q sideQueue[T]) offer(v T) bool {
	select {
	case q <- v:
		return true
	default:
		return false
	}
}

// serve does each queued item in order until quit is closed.
func (q sideQueue[T]) serve(quit <-chan struct{}, do func(T)) {
	for {
		select {
		case <-quit:
			return
		case v := <-q:
			do(v)
		}
	}
}
