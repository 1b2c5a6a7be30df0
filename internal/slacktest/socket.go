package slacktest

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/gorilla/websocket"
)

// Envelope is what Slack sends over the Socket Mode WebSocket
// (https://api.slack.com/apis/socket-mode#events).
type Envelope struct {
	EnvelopeID string          `json:"envelope_id"`
	Type       string          `json:"type"` // events_api, slash_commands, interactive
	Payload    json.RawMessage `json:"payload"`
	// RetryAttempt and RetryReason are set on redeliveries.
	RetryAttempt int    `json:"retry_attempt,omitempty"`
	RetryReason  string `json:"retry_reason,omitempty"`
}

// Ack is an app's acknowledgement of an envelope.
type Ack struct {
	EnvelopeID string          `json:"envelope_id"`
	Payload    json.RawMessage `json:"payload"`
}

// Socket is the Socket Mode side of the fake: apps.connections.open hands
// out its URL; a client that connects gets "hello", then every envelope
// sent with Send, and its acks arrive on Acks.
type Socket struct {
	send chan Envelope
	acks chan Ack
}

// Socket turns on the Socket Mode endpoint and returns it.
func (s *Server) Socket() *Socket {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.socket == nil {
		s.socket = &Socket{send: make(chan Envelope, 64), acks: make(chan Ack, 64)}
	}
	return s.socket
}

// Send queues an envelope for the connected client.
func (k *Socket) Send(env Envelope) { k.send <- env }

// Acks delivers the client's acknowledgements.
func (k *Socket) Acks() <-chan Ack { return k.acks }

// WaitAck returns the ack of envelope id, skipping others, or false after
// timeout.
func (k *Socket) WaitAck(id string, timeout time.Duration) (Ack, bool) {
	deadline := time.After(timeout)
	for {
		select {
		case a := <-k.acks:
			if a.EnvelopeID == id {
				return a, true
			}
		case <-deadline:
			return Ack{}, false
		}
	}
}

func (s *Server) serveSocket(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	k := s.socket
	s.mu.Unlock()
	if k == nil {
		http.NotFound(w, r)
		return
	}
	// slack-go sends Origin: https://api.slack.com.
	up := websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}
	conn, err := up.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	defer conn.Close()
	if err := conn.WriteJSON(map[string]any{"type": "hello", "num_connections": 1,
		"connection_info": map[string]any{"app_id": "A1"}}); err != nil {
		return
	}
	go func() {
		for {
			var a Ack
			if err := conn.ReadJSON(&a); err != nil {
				return
			}
			select {
			case k.acks <- a:
			default: // nobody is reading acks: drop, never block the socket
			}
		}
	}()
	for {
		select {
		case env := <-k.send:
			if err := conn.WriteJSON(env); err != nil {
				return
			}
		case <-r.Context().Done():
			return
		}
	}
}
