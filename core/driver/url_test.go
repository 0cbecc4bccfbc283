package driver_test

import (
	"errors"
	"net/url"
	"testing"

	"github.com/agentmem/agentmem/core/driver"
)

func TestNoCreateParam(t *testing.T) {
	for raw, want := range map[string]bool{"x://": false, "x://?create=false": true, "x://?create=0": true, "x://?create=true": false, "x://?create=1": false} {
		u, _ := url.Parse(raw)
		got, err := driver.NoCreate(u)
		if err != nil || got != want {
			t.Errorf("NoCreate(%s) = %v, %v; want %v", raw, got, err, want)
		}
		if err := driver.CheckQuery(u); err != nil {
			t.Errorf("CheckQuery(%s): %v: create is a parameter every store takes", raw, err)
		}
	}
	u, _ := url.Parse("x://?create=maybe")
	if _, err := driver.NoCreate(u); !errors.Is(err, driver.ErrInvalidURL) {
		t.Errorf("create=maybe: err = %v, want ErrInvalidURL", err)
	}
}
