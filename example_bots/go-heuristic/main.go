// The go-heuristic bot: a gRPC client of the Moon referee (docs/protocol.md).
//
// main.go is the protocol: join with MOON_TOKEN, answer every turn, join again with the
// same token when the stream drops (docs/protocol.md, "Reconnecting"), exit with the
// protocol's exit codes (0 game over, 1 error, 2 bad configuration, 3 refused).
// heuristic.go is the strategy. gen/moonv1 is generated from proto/ (`make gen-go`).
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"go-heuristic/gen/moonv1"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

const (
	botName         = "go-heuristic"
	botVersion      = "1.0"
	protocolVersion = 1
	connectTimeout  = 10 * time.Second
	// How long to keep trying to join again after a dropped stream (the referee waits
	// reconnect_ms, 5 s by default).
	reconnectTimeout = 4 * time.Second
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
	// Quiet: every turn carries the whole observation, so no need for the public events.
	join := &moonv1.Join{Token: token, ProtocolVersion: protocolVersion, BotName: name,
		BotVersion: botVersion, Quiet: true}
	client := moonv1.NewBotServiceClient(conn)
	welcomed := false // ever: a refusal of the first join is exit code 3
	var droppedAt time.Time
	for {
		over, joined, err := playStream(client, join)
		if over {
			return 0
		}
		welcomed = welcomed || joined
		if joined {
			droppedAt = time.Time{} // it was back: a later drop gets its own time
		}
		st := status.Convert(err)
		if err != nil {
			fmt.Fprintf(os.Stderr, "referee: %s: %s\n", st.Code(), st.Message())
		} else {
			fmt.Fprintln(os.Stderr, "the referee ended the stream before the game was over")
		}
		if !welcomed {
			if refused[st.Code()] {
				return 3
			}
			return 1
		}
		if refused[st.Code()] || st.Code() == codes.ResourceExhausted && !joined {
			return 1 // the referee refuses this seat's rejoin
		}
		// A dropped stream: join again with the same token; the referee sends the
		// pending turn again, if there is one.
		if droppedAt.IsZero() {
			droppedAt = time.Now()
		} else if time.Since(droppedAt) > reconnectTimeout {
			fmt.Fprintf(os.Stderr, "gave up rejoining after %s\n", reconnectTimeout)
			return 1
		}
		fmt.Fprintln(os.Stderr, "joining again with the same token")
		time.Sleep(200 * time.Millisecond)
	}
}

// playStream plays on one Play stream: it joins and answers every turn. It returns whether
// the game ended on it, whether it was welcomed, and the error that ended it (nil when the
// referee closed the stream with status OK).
func playStream(client moonv1.BotServiceClient, join *moonv1.Join) (bool, bool, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream, err := client.Play(ctx)
	if err != nil {
		return false, false, err
	}
	if err := stream.Send(&moonv1.PlayRequest{Kind: &moonv1.PlayRequest_Join{Join: join}}); err != nil {
		return false, false, err
	}
	over, welcomed := false, false
	for {
		resp, err := stream.Recv()
		if err == io.EOF { // the referee closed the stream with status OK
			_ = stream.CloseSend()
			return over, welcomed, nil
		}
		if err != nil {
			return over, welcomed, err
		}
		switch kind := resp.Kind.(type) {
		case *moonv1.PlayResponse_Welcome:
			welcomed = true
			fmt.Fprintf(os.Stderr, "joined match %s as seat %d (resumed: %v)\n",
				kind.Welcome.GetMatchId(), kind.Welcome.GetSeat(), kind.Welcome.GetResumed())
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
