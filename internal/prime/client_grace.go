package prime

import "time"

// CommandStopGrace is how long a command or job that must be stopped gets
// between SIGTERM and SIGKILL (Options.CommandStopGrace).
func (c *Client) CommandStopGrace() time.Duration { return c.stopGrace }
