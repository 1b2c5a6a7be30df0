package store

// Open returns the in-memory store when url is empty (REDIS_URL unset) and
// the Redis store otherwise. It does not contact Redis; call Ping for that.
func Open(url string, opts ...RedisOption) (Store, error) {
	if url == "" {
		return NewMemory(), nil
	}
	r, err := NewRedis(url, opts...)
	if err != nil {
		return nil, err
	}
	return r, nil
}
