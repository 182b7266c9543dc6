// __NAME__: a Moon bot in Go, a gRPC client of the referee (see README.md).
//
// main.go is the protocol: join with MOON_TOKEN, answer every turn, exit with the
// protocol's exit codes (0 game over, 1 error, 2 bad configuration, 3 refused).
// strategy.go is the strategy. gen/moonv1 is generated from the protocol's .proto files.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"__GO_MODULE__/gen/moonv1"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

const (
	botName         = "__NAME__"
	botVersion      = "0.1"
	protocolVersion = 1
	connectTimeout  = 10 * time.Second
)

// Statuses with which the referee refuses a join: exit code 3.
var refused = map[codes.Code]bool{
	codes.Unauthenticated: true, codes.FailedPrecondition: true, codes.InvalidArgument: true,
}

func main() { os.Exit(run()) }

func run() int {
	address, token := os.Getenv("MOON_ADDRESS"), os.Getenv("MOON_TOKEN")
	if address == "" || token == "" {
		fmt.Fprintln(os.Stderr, "MOON_ADDRESS and MOON_TOKEN must be set")
		return 2
	}
	name := os.Getenv("MOON_BOT_NAME")
	if name == "" {
		name = botName
	}
	// MOON_ADDRESS is host:port or unix:///path, both gRPC target names.
	conn, err := grpc.NewClient(address, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		fmt.Fprintf(os.Stderr, "bad MOON_ADDRESS %q: %v\n", address, err)
		return 2
	}
	defer conn.Close()
	if !waitReady(conn, connectTimeout) {
		fmt.Fprintf(os.Stderr, "cannot reach the referee at %s\n", address)
		return 1
	}
	stream, err := moonv1.NewBotServiceClient(conn).Play(context.Background())
	if err != nil {
		fmt.Fprintf(os.Stderr, "cannot open the stream: %v\n", err)
		return 1
	}
	// Quiet: every turn carries the whole observation, so no need for the public events.
	join := &moonv1.Join{Token: token, ProtocolVersion: protocolVersion, BotName: name,
		BotVersion: botVersion, Quiet: true}
	if err := stream.Send(&moonv1.PlayRequest{Kind: &moonv1.PlayRequest_Join{Join: join}}); err != nil {
		fmt.Fprintf(os.Stderr, "cannot join: %v\n", err)
		return 1
	}
	welcomed, over := false, false
	for {
		resp, err := stream.Recv()
		if err == io.EOF { // the referee closed the stream with status OK
			_ = stream.CloseSend()
			if over {
				return 0
			}
			fmt.Fprintln(os.Stderr, "the referee ended the stream before the game was over")
			return 1
		}
		if err != nil {
			st := status.Convert(err)
			fmt.Fprintf(os.Stderr, "referee: %s: %s\n", st.Code(), st.Message())
			if !welcomed && refused[st.Code()] {
				return 3
			}
			return 1
		}
		switch kind := resp.Kind.(type) {
		case *moonv1.PlayResponse_Welcome:
			welcomed = true
			fmt.Fprintf(os.Stderr, "joined match %s as seat %d\n", kind.Welcome.GetMatchId(),
				kind.Welcome.GetSeat())
		case *moonv1.PlayResponse_Turn:
			reply := &moonv1.ActionReply{RequestId: kind.Turn.GetRequestId(), Action: choose(kind.Turn)}
			if err := stream.Send(&moonv1.PlayRequest{Kind: &moonv1.PlayRequest_Action{Action: reply}}); err != nil {
				fmt.Fprintf(os.Stderr, "cannot send: %v\n", err)
			}
		case *moonv1.PlayResponse_Event:
			if kind.Event.GetGameEnded() != nil {
				over = true
			}
		case *moonv1.PlayResponse_Rejected:
			fmt.Fprintf(os.Stderr, "action rejected: %s\n", kind.Rejected.GetReason())
		}
	}
}

// waitReady connects and waits until the channel is ready, at most timeout.
func waitReady(conn *grpc.ClientConn, timeout time.Duration) bool {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	conn.Connect()
	for state := conn.GetState(); state != connectivity.Ready; state = conn.GetState() {
		if !conn.WaitForStateChange(ctx, state) {
			return false
		}
	}
	return true
}
