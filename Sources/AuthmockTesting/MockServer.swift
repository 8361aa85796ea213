import AsyncHTTPClient
import AuthmockDialect
import AuthmockProxy
import AuthmockScenario
public import AuthmockServer

/// A mock for a test of its own: started in this process on 127.0.0.1 and
/// a free port, steered through `control` (the clock, faults, expiry and
/// revocation, the journal), stopped by the test.
public enum MockServer {
    /// Starts a mock. `dialect`: a built-in dialect (`oauth2`, or a built-in
    /// dialect file's name: `authmock dialects` lists them) or the path of
    /// a dialect file;
    /// `configure` sets anything else (token lifetimes, rotation, users)
    /// before it starts. Call `stop()` on it when done, or use `with`.
    public static func start(dialect: String = "oauth2", configure: (inout ServerOptions) throws -> Void = { _ in }) async throws -> RunningMock {
        var options = try options(dialect: dialect)
        try configure(&options)
        return try await RunningMock.start(try await Authmock(options: options))
    }

    /// Starts `authmock proxy` in this process (docs/proxy.md): in front of
    /// the backend at `upstream`, which speaks `dialect`, with its verdicts
    /// on (`control.verdicts()`). The app under test uses the proxy's
    /// `baseURL`; its clock expires the backend's tokens at the proxy,
    /// and its faults act on the real traffic.
    public static func proxy(
        upstream: String, dialect: String = "oauth2", expireAfterSeconds: Double? = nil,
        configure: (inout ServerOptions) throws -> Void = { _ in }
    ) async throws -> RunningMock {
        var options = try options(dialect: dialect)
        options.upstream = try UpstreamOptions(url: upstream, expireAfterSeconds: expireAfterSeconds)
        options.judge = true
        try configure(&options)
        let mock = try await Authmock(options: options, judge: TrafficJudge())
        // `configure` may have changed the upstream's options (its timeout, a CA file); a nil one is no proxy.
        guard let upstreamOptions = options.upstream else { throw StartError("a proxy needs an upstream; configure removed it") }
        let client = UpstreamForwarder.makeClient(upstreamOptions)
        return try await RunningMock.start(
            mock, forwarder: UpstreamForwarder(mock: mock, client: client).forwarding, onStop: { try? await client.shutdown() })
    }

    /// A server's options for `dialect`: a built-in dialect's, or a dialect file's.
    private static func options(dialect: String) throws -> ServerOptions {
        var options = ServerOptions(host: "127.0.0.1", port: 0)
        do {
            try DialectLoader.serve(dialect, with: &options)
        } catch {
            throw StartError("'\(dialect)' is neither a built-in dialect (\(Dialects.names.joined(separator: ", "))) nor a dialect file: \(error)")
        }
        return options
    }

    /// Runs `body` with a started mock, and stops it after, whatever `body` did.
    public static func with<T>(
        dialect: String = "oauth2", configure: (inout ServerOptions) throws -> Void = { _ in },
        _ body: (RunningMock) async throws -> T
    ) async throws -> T {
        let mock = try await start(dialect: dialect, configure: configure)
        do {
            let value = try await body(mock)
            await mock.stop()
            return value
        } catch {
            await mock.stop()
            throw error
        }
    }
}
