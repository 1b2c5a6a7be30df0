package store_test

import (
	"testing"

	"github.com/vrambot/vrambot/store"
	"github.com/vrambot/vrambot/store/storetest"
)

func TestMemoryConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return store.NewMemory() })
}
