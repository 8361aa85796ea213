import Foundation
import HummingbirdWSClient
import NIOWebSocket
import Logging

extension Driver {
    /// The attach transport: connects to `authmock run --attach` at `url`
    /// (`ws://HOST:PORT/attach`, printed by the runner) and serves the same
    /// protocol-v1 messages as the stdio transport, one JSON message per text
    /// frame, case after case: every `hello` makes a fresh client with
    /// `makeClient` against that case's server. Returns when the runner ends
    /// the run (close code 1000). When the connection drops for any other
    /// reason (the runner closes it after a case that ended in ERROR), it
    /// reconnects for the next case. Throws when the runner cannot be
    /// reached for `patience` seconds.
    ///
    /// `connections` > 1 serves that many cases at once, each connection
    /// with its own clients (the runner's `--jobs` still bounds it).
    ///
    /// In an app's test target (XCTest or Swift Testing), this is the whole
    /// test: `try await Driver.attach(to: url, identity: ...) { hello in MyClient(hello) }`.
    public static func attach(
        to url: String, identity: DriverIdentity, connections: Int = 1, patience: Double = 30,
        makeClient: @escaping @Sendable (Hello) async throws -> any DriverClient
    ) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<max(1, connections) {
                group.addTask { try await serve(url: url, identity: identity, patience: patience, makeClient: makeClient) }
            }
            try await group.waitForAll()
        }
    }

    /// One connection, reconnected until the runner says the run is over.
    private static func serve(
        url: String, identity: DriverIdentity, patience: Double,
        makeClient: @escaping @Sendable (Hello) async throws -> any DriverClient
    ) async throws {
        var logger = Logger(label: "authmock-attach")
        logger.logLevel = .critical
        var lastContact = Date()
        while true {
            do {
                let close = try await WebSocketClient.connect(url: url, configuration: .init(maxFrameSize: 1 << 22), logger: logger) {
                    inbound, outbound, _ in
                    var conversation = Conversation(identity: identity, makeClient: makeClient) { message in
                        try? await outbound.write(.text(message.jsonLine))
                    }
                    await withTaskGroup(of: Void.self) { group in
                        do {
                            for try await message in inbound.messages(maxSize: 1 << 22) {
                                guard case .text(let text) = message else { continue }
                                for line in text.split(separator: "\n") {
                                    _ = await conversation.handle(String(line), in: &group)
                                }
                            }
                        } catch {
                            // The connection broke: as when it closes.
                        }
                        // The runner went away: calls still running answer no one.
                        group.cancelAll()
                    }
                }
                lastContact = Date()
                if close?.closeCode == .normalClosure { return }
            } catch {
                if Date().timeIntervalSince(lastContact) > patience {
                    throw AttachError(description: "cannot reach the runner at \(url) for \(Int(patience)) s: \(error)")
                }
            }
            try await Task.sleep(for: .milliseconds(300))
        }
    }
}

/// The runner at the attach URL could not be reached.
public struct AttachError: Error, CustomStringConvertible {
    public let description: String
}
