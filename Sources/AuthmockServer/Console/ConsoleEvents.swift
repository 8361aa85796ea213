import Foundation
import Hummingbird
import ServiceLifecycle

/// `GET /_authmock/events`: server-sent events for the console. An event
/// `journal` carries the newest sequence number whenever the journal has
/// grown (looked at four times a second), a comment every 15 s keeps the
/// connection from looking idle. A stream ends after 30 minutes (a browser's
/// EventSource reconnects by itself), when its reader goes away (a write
/// fails), and when the server begins to shut down, so an open console
/// never holds up a stop.
enum ConsoleEvents {
    static let interval = Duration.milliseconds(250)
    static let keepAlive = 60
    static let lifetime = 7200

    static func response(_ control: MockControl) -> Response {
        let body = ResponseBody { writer in
            var sent: Int? = nil
            var quiet = 0
            try await writer.write(ByteBuffer(string: "retry: 1000\n\n"))
            for _ in 0..<lifetime {
                if Task.isCancelled || Task.isShuttingDownGracefully { break }
                let last = (try? await control.journalLastSequence()) ?? sent ?? 0
                if last != sent {
                    try await writer.write(ByteBuffer(string: "event: journal\ndata: {\"last\":\(last)}\n\n"))
                    sent = last
                    quiet = 0
                } else {
                    quiet += 1
                    if quiet >= keepAlive {
                        try await writer.write(ByteBuffer(string: ": keep-alive\n\n"))
                        quiet = 0
                    }
                }
                try await Task.sleep(for: interval)
            }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-store"], body: body)
    }
}
