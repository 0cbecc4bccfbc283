package anthropic_test

import (
	"context"
	"log"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	memtool "github.com/agentmem/agentmem/anthropic"
	_ "github.com/agentmem/agentmem/core/memstore" // registers mem://
	"github.com/agentmem/agentmem/core/store"
)

// An agent loop with the official SDK: HandleMessage runs every memory
// tool_use block of a response. It needs ANTHROPIC_API_KEY, so it is only
// compiled.
func ExampleTool_HandleMessage() {
	ctx := context.Background()
	s, err := store.Open(ctx, "mem://", nil) // any store URL: sqlite:memory.db, postgres://…
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	tool, err := memtool.New(s, nil)
	if err != nil {
		log.Fatal(err)
	}

	userID := "kamal@example.com"                  // from your auth, never from the model
	listing, err := tool.ListingBlock(ctx, userID) // optional: show the model its memory up front
	if err != nil {
		log.Fatal(err)
	}
	client := sdk.NewClient() // ANTHROPIC_API_KEY
	params := sdk.BetaMessageNewParams{
		Model:     sdk.ModelClaudeSonnet4_5,
		MaxTokens: 2048,
		Tools:     []sdk.BetaToolUnionParam{memtool.ToolParam()},
		Betas:     []sdk.AnthropicBeta{memtool.Beta},
		Messages: []sdk.BetaMessageParam{sdk.NewBetaUserMessage(
			sdk.BetaContentBlockParamUnion{OfText: &listing},
			sdk.NewBetaTextBlock("I switched from tea to coffee."),
		)},
	}
	for {
		msg, err := client.Beta.Messages.New(ctx, params)
		if err != nil {
			log.Fatal(err)
		}
		params.Messages = append(params.Messages, msg.ToParam())
		if msg.StopReason != sdk.BetaStopReasonToolUse {
			break
		}
		// A crashed loop that replays msg gets the same results and changes
		// nothing twice.
		results, err := tool.HandleMessage(ctx, userID, msg)
		if err != nil {
			log.Fatal(err) // backend down: retrying with the same msg is safe
		}
		params.Messages = append(params.Messages, sdk.NewBetaUserMessage(results...))
	}
}
