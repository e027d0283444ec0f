package prime

import "sync"

// retiredSandboxes are the sandboxes this process's refreshes found retired.
type retiredSandboxes struct {
	mu  sync.Mutex
	ids map[string]bool
}

// MarkRetired notes that a sandbox ended by design once a checkpoint of it
// was DURABLE (a template a checkpoint retired): its resource stays in
// state, and what lived in it (uploaded files) is recorded history rather
// than drift, so a refresh of those keeps them as they are.
func (c *Client) MarkRetired(id string) {
	c.retired.mu.Lock()
	defer c.retired.mu.Unlock()
	if c.retired.ids == nil {
		c.retired.ids = map[string]bool{}
	}
	c.retired.ids[id] = true
}

// Retired reports whether a refresh of this process marked the sandbox
// retired (MarkRetired).
func (c *Client) Retired(id string) bool {
	c.retired.mu.Lock()
	defer c.retired.mu.Unlock()
	return c.retired.ids[id]
}
