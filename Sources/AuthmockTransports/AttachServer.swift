import Foundation
import Hummingbird
import HummingbirdWebSocket
import Logging
import ServiceLifecycle
import Synchronization

/// Where `authmock run --attach` listens and how clients reach it.
public struct AttachOptions: Sendable {
    public var listenHost = "127.0.0.1"
    /// 0 picks a free port (printed).
    public var listenPort = 0
    /// Host name clients use for this machine (`--public-url`): the attach
    /// URL and every case server's URL carry it. nil: the listen host.
    public var publicHost: String?
    /// Seconds a case waits for a client before it is an ERROR.
    public var timeout: Double = 300
    /// Files served under `/assets/` (a library's browser build, e.g. axios).
    public var assetsDirectory: String?

    public init() {}

    /// `--public-url http://HOST`: scheme and host only; ports come from the listeners.
    public mutating func setPublicURL(_ text: String) throws(AttachSetupError) {
        guard let url = URL(string: text), url.scheme == "http", let host = url.host(), !host.isEmpty else {
            throw AttachSetupError("--public-url takes http://HOST (how the client reaches this machine), got '\(text)'")
        }
        guard url.port == nil, url.path().isEmpty || url.path() == "/" else {
            throw AttachSetupError("--public-url takes only a scheme and host (each case's server has its own port), got '\(text)'")
        }
        publicHost = host
    }

    /// `--listen HOST:PORT`.
    public mutating func setListen(_ text: String) throws(AttachSetupError) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port) else {
            throw AttachSetupError("--listen takes HOST:PORT (e.g. 127.0.0.1:8765, or 0.0.0.0:8765 for a device on the network), got '\(text)'")
        }
        listenHost = String(text[..<colon]).trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        listenPort = port
    }

    /// The host clients use, in a URL.
    var advertisedHost: String {
        let host = publicHost ?? (listenHost == "0.0.0.0" || listenHost == "::" ? "127.0.0.1" : listenHost)
        return host.contains(":") ? "[\(host)]" : host
    }
}

/// The browser attach client (drivers/browser/), compiled in
/// (BrowserClient+Files.swift, written by scripts/embed-suite.py).
enum BrowserClient {}

public struct AttachSetupError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

/// Set once the listener has stopped.
private final class StopFlag: Sendable {
    let done = Atomic(false)
}

/// The attach listener: `ws://HOST:PORT/attach` for clients, and the browser
/// client's page at `http://HOST:PORT/`.
public enum AttachServer {
    /// The largest message a client may send, in one frame or several.
    static let maxMessageBytes = 1 << 22
    /// How long connections may take to close once every case has run (a
    /// stalled one would hold the run forever).
    static let drainDeadline: Duration = .seconds(2)

    /// Runs the listener around `body`; the hub learns its URL before `body` starts.
    public static func serving<T: Sendable>(
        hub: AttachHub, options: AttachOptions, _ body: @escaping @Sendable () async -> T
    ) async throws -> T {
        var logger = Logger(label: "authmock-attach")
        logger.logLevel = .critical
        let router = Router(context: BasicWebSocketRequestContext.self)
        addPages(to: router, assets: options.assetsDirectory)
        router.ws("/attach") { _, _ in
            .upgrade([:])
        } onUpgrade: { inbound, outbound, context in
            let agent = context.request.headers[.userAgent] ?? "no User-Agent"
            guard let client = await hub.connected(peer: agent, outbound: outbound) else { return }
            do {
                for try await message in inbound.messages(maxSize: Self.maxMessageBytes) {
                    switch message {
                    case .text(let text): await client.received(text)
                    case .binary: await client.receivedBinary()
                    }
                }
            } catch {
                // A broken connection ends like a closed one.
            }
            await client.disconnected()
            await hub.disconnected(client)
        }
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let app = Application(
            router: router,
            // Driver messages may be large (a body, evidence): frames up to
            // the 4 MiB a message may have, not WebSocket's 16 KiB default.
            server: .http1WebSocketUpgrade(webSocketRouter: router, configuration: .init(ws: .init(maxFrameSize: Self.maxMessageBytes))),
            configuration: .init(address: .hostname(options.listenHost, port: options.listenPort), serverName: "authmock-attach"),
            onServerRunning: { channel in
                portContinuation.yield(channel.localAddress?.port ?? options.listenPort)
                portContinuation.finish()
            },
            logger: logger)
        let services = ServiceGroup(configuration: .init(services: [app], logger: logger))
        let server = Task { try await services.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else {
            let failure = await server.result
            if case .failure(let error) = failure { throw AttachSetupError("cannot listen on \(options.listenHost):\(options.listenPort): \(error)") }
            throw AttachSetupError("cannot listen on \(options.listenHost):\(options.listenPort)")
        }
        await hub.listening(at: "ws://\(options.advertisedHost):\(port)/attach")
        let value = await body()
        // A connection that never sent a request is waited for by the
        // listener's shutdown forever (nothing times out a connection before
        // its first bytes): after the deadline the run goes on without it,
        // and the process's end closes it.
        // (Not a task group: it would wait for the stuck child anyway.)
        let stopped = StopFlag()
        Task {
            await hub.finish()
            await services.triggerGracefulShutdown()
            _ = await server.result
            stopped.done.store(true, ordering: .releasing)
        }
        let deadline = ContinuousClock.now + drainDeadline
        while !stopped.done.load(ordering: .acquiring), ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(20)) }
        return value
    }

    static func addPages(to router: Router<BasicWebSocketRequestContext>, assets: String?) {
        @Sendable func page(_ name: String) -> Response {
            guard let file = BrowserClient.files.first(where: { $0.name == name }) else { return Response(status: .notFound) }
            return Response(
                status: .ok, headers: [.contentType: contentType(name), .cacheControl: "no-store"],
                body: .init(byteBuffer: ByteBuffer(string: file.text)))
        }
        router.get("/") { _, _ in page("index.html") }
        router.get("/:file") { _, context in page(context.parameters.get("file") ?? "") }
        router.get("/assets/:file") { _, context in
            // Plain file names only: nothing outside the directory is served.
            guard let assets, let name = context.parameters.get("file"), !name.hasPrefix("."), !name.contains("/"),
                let data = FileManager.default.contents(atPath: (assets as NSString).appendingPathComponent(name))
            else { return Response(status: .notFound) }
            return Response(status: .ok, headers: [.contentType: contentType(name)], body: .init(byteBuffer: ByteBuffer(bytes: data)))
        }
    }

    static func contentType(_ name: String) -> String {
        if name.hasSuffix(".html") { return "text/html; charset=utf-8" }
        if name.hasSuffix(".js") { return "text/javascript; charset=utf-8" }
        return "application/octet-stream"
    }
}
