package bot

import (
	"github.com/slack-go/slack"

	"github.com/vrambot/vrambot/reply"
)

// Message is one message as the Poster sends it: chat.postMessage's
// fallback text and Block Kit blocks. A dry run prints these (`vrambot
// digest --blocks`), so what it shows is what would be posted.
type Message struct {
	Text   string        `json:"text"`
	Blocks []slack.Block `json:"blocks"`
	// File names the file shared with the message (the digest's chart).
	File string `json:"file,omitempty"`
	// InThread marks a reply posted in the first message's thread.
	InThread bool `json:"in_thread,omitempty"`
}

// Thread renders a message and the replies posted in its thread, as
// PostReply (and PostReplyWithFile, sharing file) would post them.
func Thread(main reply.Reply, file string, replies []reply.Reply) []Message {
	blocks, text := Blocks(main)
	out := []Message{{Text: text, Blocks: blocks, File: file}}
	for _, r := range replies {
		blocks, text := Blocks(r)
		out = append(out, Message{Text: text, Blocks: blocks, InThread: true})
	}
	return out
}
