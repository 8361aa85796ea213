import AuthmockScenario
import DriverProtocol
import Foundation
import NIOWebSocket
import Synchronization
import WSCore

/// One client attached over a WebSocket: it serves one case at a time,
/// carrying exactly the protocol-v1 messages of the stdio transport, one
/// JSON message per text frame.
final class AttachedClient: Sendable {
    let number: Int
    let peer: String
    private let outbound: WebSocketOutboundWriter
    /// The case it serves now; what it sends goes there.
    private let channel = Mutex<DriverChannel?>(nil)
    private let closed = Mutex(false)

    init(number: Int, peer: String, outbound: WebSocketOutboundWriter) {
        self.number = number
        self.peer = peer
        self.outbound = outbound
    }

    var isClosed: Bool { closed.withLock { $0 } }

    func serve(_ channel: DriverChannel?) { self.channel.withLock { $0 = channel } }

    func send(_ line: String) async throws {
        let text = line.hasSuffix("\n") ? String(line.dropLast()) : line
        do {
            try await outbound.write(.text(text))
        } catch {
            throw DriverFailure.exitedEarly(status: "the attached client's connection is closed")
        }
    }

    /// A text frame from the client; lines outside a case are dropped.
    func received(_ text: String) async {
        guard let channel = channel.withLock({ $0 }) else { return }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: true)
        // An empty message answers nothing: left alone, the call it was meant for would wait out its deadline.
        guard !lines.isEmpty else { return await channel.fail(.notJSON(line: "(an empty WebSocket message)")) }
        for line in lines { await channel.received(String(line)) }
    }

    func receivedBinary() async {
        await channel.withLock({ $0 })?.fail(.notJSON(line: "(a binary WebSocket frame; the protocol sends JSON text frames)"))
    }

    func disconnected() async {
        closed.withLock { $0 = true }
        await channel.withLock({ $0 })?.ended(status: "the attached client disconnected")
    }

    /// Ends the connection: `reconnect` asks the client to come back for the next case.
    func close(reconnect: Bool) async {
        guard !isClosed else { return }
        try? await outbound.close(
            reconnect ? .unknown(AttachHub.reconnectCode) : .normalClosure,
            reason: reconnect ? "the case ended in ERROR; reconnect for the next case" : "the run is over")
    }
}

/// Where attached clients wait between cases. A case takes an idle client
/// (waiting for one to connect, printing progress, up to a deadline), runs
/// on it, and gives it back; after a case that did not end cleanly the
/// connection is closed so nothing late from that case leaks into the next,
/// and the client reconnects.
public actor AttachHub {
    /// Close code asking the client to reconnect (4000-4999: private use).
    static let reconnectCode: UInt16 = 4000

    /// The URL clients connect to (`ws://HOST:PORT/attach`), once listening.
    public private(set) var attachURL = ""
    /// The browser page's URL (`http://HOST:PORT/`).
    public var pageURL: String { attachURL.replacingOccurrences(of: "ws://", with: "http://").replacingOccurrences(of: "/attach", with: "/") }
    /// How long a case waits for a client before it is an ERROR.
    public let timeout: Double
    private let progress: @Sendable (String) -> Void
    private var idle: [AttachedClient] = []
    private var all: [Int: AttachedClient] = [:]
    private var waiters: [(id: Int, continuation: CheckedContinuation<AttachedClient?, Never>)] = []
    private var nextNumber = 1
    private var nextWaiter = 0
    private var gaveUp = false
    private var finished = false

    public init(timeout: Double, progress: @escaping @Sendable (String) -> Void) {
        self.timeout = timeout
        self.progress = progress
    }

    func listening(at url: String) { attachURL = url }

    func connected(peer: String, outbound: WebSocketOutboundWriter) -> AttachedClient? {
        guard !finished else { return nil }
        let client = AttachedClient(number: nextNumber, peer: peer, outbound: outbound)
        nextNumber += 1
        all[client.number] = client
        gaveUp = false
        progress("client \(client.number) attached from \(peer)")
        give(client)
        return client
    }

    func disconnected(_ client: AttachedClient) {
        all[client.number] = nil
        idle.removeAll { $0 === client }
        if !finished { progress("client \(client.number) disconnected") }
    }

    private func give(_ client: AttachedClient) {
        if waiters.isEmpty {
            idle.append(client)
        } else {
            waiters.removeFirst().continuation.resume(returning: client)
        }
    }

    /// An idle client, or nil when none came within `timeout` seconds.
    func acquire() async -> AttachedClient? {
        while let client = idle.first {
            idle.removeFirst()
            if !client.isClosed { return client }
        }
        if gaveUp || finished { return nil }
        let id = nextWaiter
        nextWaiter += 1
        let started = Date()
        let ticker = Task { [weak self, timeout] in
            while !Task.isCancelled {
                // A reminder every 10 s, and a wake-up at the deadline.
                let left = timeout - Date().timeIntervalSince(started)
                try? await Task.sleep(for: .seconds(max(0.05, min(10, left))))
                guard !Task.isCancelled, let self else { return }
                let waited = Date().timeIntervalSince(started)
                if waited >= timeout {
                    await self.expire(id)
                    return
                }
                await self.remind(waited: waited)
            }
        }
        defer { ticker.cancel() }
        return await withCheckedContinuation { continuation in
            waiters.append((id, continuation))
        }
    }

    private func remind(waited: Double) {
        guard all.isEmpty else { return }
        progress("waiting for a client to attach at \(attachURL) (\(Int(waited)) s of \(Int(timeout)) s)")
    }

    private func expire(_ id: Int) {
        guard let index = waiters.firstIndex(where: { $0.id == id }) else { return }
        waiters.remove(at: index).continuation.resume(returning: nil)
        if all.isEmpty {
            gaveUp = true
            // Every later case would wait as long for nothing.
            for waiter in waiters { waiter.continuation.resume(returning: nil) }
            waiters.removeAll()
        }
    }

    /// Gives `client` back after a case; `clean` is false when the case
    /// ended with calls unanswered or the conversation broken.
    func release(_ client: AttachedClient, clean: Bool) async {
        client.serve(nil)
        if clean && !client.isClosed {
            give(client)
        } else {
            await client.close(reconnect: true)
        }
    }

    /// The run is over: every client is told so (close code 1000).
    public func finish() async {
        finished = true
        for waiter in waiters { waiter.continuation.resume(returning: nil) }
        waiters.removeAll()
        for client in all.values { await client.close(reconnect: false) }
        idle.removeAll()
    }

    /// Why a case got no client.
    var noClientReason: String {
        "no client attached to \(attachURL) within \(Int(timeout)) s (start the app's attach test or open \(pageURL) in a browser, "
            + "and check the URL is reachable from where the client runs: --listen, --public-url)"
    }
}
