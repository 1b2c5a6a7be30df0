package slacktest_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/slack-go/slack"

	"github.com/vrambot/vrambot/internal/slacktest"
)

// TestSpeaksSlack drives the fake with slack-go itself, as the bot does.
func TestSpeaksSlack(t *testing.T) {
	fs := slacktest.New(t)
	ctx := context.Background()
	api := slack.New(slacktest.BotToken, slack.OptionAPIURL(fs.APIURL()))
	if r, err := api.AuthTestContext(ctx); err != nil || r.UserID != slacktest.BotUserID {
		t.Fatalf("auth.test = %+v, %v", r, err)
	}
	_, ts, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("hi", false))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := api.UpdateMessageContext(ctx, "C1", ts, slack.MsgOptionText("edited", false)); err != nil {
		t.Fatal(err)
	}
	if m := fs.Messages(); len(m) != 1 || m[0].Text != "edited" {
		t.Errorf("messages %+v", m)
	}
	if _, err := api.UploadFileContext(ctx, slack.UploadFileParameters{Filename: "a.txt", FileSize: 3, Content: "abc", Channel: "C1", ThreadTimestamp: ts}); err != nil {
		t.Fatalf("upload flow: %v", err)
	}
	if b, ok := fs.Upload("F0001"); !ok || string(b) != "abc" {
		t.Errorf("uploaded %q", b)
	}
	view := slack.ModalViewRequest{Type: slack.VTModal, Title: slack.NewTextBlockObject(slack.PlainTextType, "t", false, false)}
	if _, err := api.OpenViewContext(ctx, "trigger.1", view); err != nil {
		t.Fatalf("views.open: %v", err)
	}
	home := slack.HomeTabViewRequest{Type: slack.VTHomeTab}
	if _, err := api.PublishViewContext(ctx, slack.PublishViewContextRequest{UserID: "U1", View: home}); err != nil {
		t.Fatalf("views.publish: %v", err)
	}
	// The wrong token is refused as Slack refuses it.
	bad := slack.New("xoxb-wrong", slack.OptionAPIURL(fs.APIURL()))
	var slackErr slack.SlackErrorResponse
	if _, _, err := bad.PostMessageContext(ctx, "C1", slack.MsgOptionText("x", false)); !errors.As(err, &slackErr) || slackErr.Err != "invalid_auth" {
		t.Errorf("wrong token: %v", err)
	}
	// Scripted faults.
	fs.SetFaults("chat.postMessage", slacktest.FailFirst(1, slacktest.Fault{Status: http.StatusInternalServerError}))
	var status slack.StatusCodeError
	if _, _, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("x", false)); !errors.As(err, &status) || status.Code != 500 {
		t.Errorf("scripted 500: %v", err)
	}
	if _, _, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("x", false)); err != nil {
		t.Errorf("after the fault: %v", err)
	}
	if n := len(fs.Calls("chat.postMessage")); n != 4 {
		t.Errorf("%d postMessage calls recorded", n)
	}
}
