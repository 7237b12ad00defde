package admission

import "time"

// SetNow makes the pool read the time from now.
func (c *CPU) SetNow(now func() time.Time) { c.now = now }
