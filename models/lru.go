package models

import (
	"container/list"
	"sync"
	"time"
)

// lru is a least-recently-used cache bounded in entries and in bytes (each
// entry states its cost), whose entries also expire. It is safe for
// concurrent use.
type lru[V any] struct {
	maxEntries int
	maxBytes   int
	now        func() time.Time

	mu    sync.Mutex
	bytes int
	order *list.List // front: most recently used
	items map[string]*list.Element
}

type lruItem[V any] struct {
	key     string
	val     V
	cost    int
	expires time.Time
}

func newLRU[V any](maxEntries, maxBytes int, now func() time.Time) *lru[V] {
	return &lru[V]{maxEntries: maxEntries, maxBytes: maxBytes, now: now, order: list.New(), items: map[string]*list.Element{}}
}

// get returns key's value unless it is missing or expired.
func (c *lru[V]) get(key string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var zero V
	e, ok := c.items[key]
	if !ok {
		return zero, false
	}
	it := e.Value.(*lruItem[V])
	if !c.now().Before(it.expires) {
		c.remove(e)
		return zero, false
	}
	c.order.MoveToFront(e)
	return it.val, true
}

// put stores val under key until expires, then drops the least recently
// used entries until both bounds hold. An entry larger than the byte bound
// is not kept.
func (c *lru[V]) put(key string, val V, cost int, expires time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[key]; ok {
		c.remove(e)
	}
	if cost > c.maxBytes || !c.now().Before(expires) {
		return
	}
	c.items[key] = c.order.PushFront(&lruItem[V]{key: key, val: val, cost: cost, expires: expires})
	c.bytes += cost
	for c.order.Len() > c.maxEntries || c.bytes > c.maxBytes {
		c.remove(c.order.Back())
	}
}

// remove drops e; c.mu must be held.
func (c *lru[V]) remove(e *list.Element) {
	it := e.Value.(*lruItem[V])
	c.order.Remove(e)
	delete(c.items, it.key)
	c.bytes -= it.cost
}

// size is the number of entries and their cost, for tests.
func (c *lru[V]) size() (entries, bytes int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len(), c.bytes
}
