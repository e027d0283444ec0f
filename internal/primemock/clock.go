package primemock

// The mock clock: the time the mock reports (createdAt, terminatedAt, token
// expiry, event times) and the time lifetimes and idle timeouts are
// measured on. It runs ClockRate times as fast as the real clock (or
// Options.Now, when a test gives one), and POST /_mock/clock moves it
// forward at once, so that a 60-minute lifetime can end in a test's second.
// Boot, apply, pause and the other delays stay on the real clock: they are
// the mock's pace, not the platform's.

import (
	"fmt"
	"net/http"
	"time"
)

// clock maps real time to mock time: mockBase at realBase, then rate mock
// seconds per real second. Guarded by Server.mu.
type clock struct {
	realBase, mockBase time.Time
	rate               float64
}

func newClock(wall time.Time, rate float64) clock {
	return clock{realBase: wall, mockBase: wall, rate: clockRate(rate)}
}

// clockRate resolves Options.ClockRate: 0 (or less) is real time.
func clockRate(r float64) float64 {
	if r <= 0 {
		return 1
	}
	return r
}

func (c clock) at(wall time.Time) time.Time {
	return c.mockBase.Add(time.Duration(float64(wall.Sub(c.realBase)) * c.rate))
}

// realWait is how long, in real time, until mock time has moved by d.
func (c clock) realWait(d time.Duration) time.Duration {
	return time.Duration(float64(d) / c.rate)
}

// realNow is the real clock: Options.Now when a test gives one.
func (s *Server) realNow() time.Time {
	if s.opts.Now != nil {
		return s.opts.Now().UTC()
	}
	return time.Now().UTC()
}

// now is the mock clock, in UTC.
func (s *Server) now() time.Time { return s.clk.at(s.realNow()) }

// setClockRate changes the rate from now on (the clock does not jump).
func (s *Server) setClockRate(rate float64) {
	wall := s.realNow()
	s.clk = clock{realBase: wall, mockBase: s.clk.at(wall), rate: clockRate(rate)}
}

// Now is the mock clock's time.
func (s *Server) Now() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.now()
}

// AdvanceClock moves the mock clock forward by d: every lifetime or idle
// timeout that d passes ends now, before AdvanceClock returns.
func (s *Server) AdvanceClock(d time.Duration) error {
	if d < 0 {
		return fmt.Errorf("the mock clock only moves forward, got %s", d)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clk.mockBase = s.clk.mockBase.Add(d)
	s.armLifetimes()
	return nil
}

// clockAnswer is GET and POST /_mock/clock's answer.
type clockAnswer struct {
	Now  time.Time `json:"now"`
	Rate float64   `json:"rate"`
	// Ahead is how far the mock clock is ahead of the real one.
	Ahead Duration `json:"ahead"`
}

// handleClock serves GET /_mock/clock and POST /_mock/clock {"advance":
// "59m"} (a Go duration string, or seconds), optionally with "rate".
func (s *Server) handleClock(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost {
		var body struct {
			Advance *Duration `json:"advance"`
			Rate    *float64  `json:"rate"`
		}
		if err := decodeBody(r, &body); err != nil {
			writeJSON(w, http.StatusUnprocessableEntity, detail(err.Error()))
			return
		}
		if body.Rate != nil {
			if !(*body.Rate > 0 && *body.Rate <= maxClockRate) {
				writeJSON(w, http.StatusUnprocessableEntity, detail(fmt.Sprintf("rate must be above 0 and at most %g, got %g", float64(maxClockRate), *body.Rate)))
				return
			}
			s.Configure(func(o *Options) { o.ClockRate = *body.Rate })
		}
		if body.Advance != nil {
			if err := s.AdvanceClock(time.Duration(*body.Advance)); err != nil {
				writeJSON(w, http.StatusUnprocessableEntity, detail(err.Error()))
				return
			}
		}
	}
	s.mu.Lock()
	wall := s.realNow()
	ans := clockAnswer{Now: s.clk.at(wall), Rate: s.clk.rate, Ahead: Duration(s.clk.at(wall).Sub(wall))}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, ans)
}

// maxClockRate bounds ClockRate: a day per real second.
const maxClockRate = 86400
