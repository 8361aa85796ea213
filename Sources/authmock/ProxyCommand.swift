import ArgumentParser
import AuthmockCore
import AuthmockServer
import Foundation

struct ProxyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "proxy",
        abstract: "Put authmock in front of your real backend: your app's refresh logic against real tokens, with faults and early expiry.",
        discussion: """
            Every request reaches the backend at --upstream unchanged (hop-by-hop headers aside), and its \
            answer comes back; the dialect (--dialect NAME or FILE) tells where sign-in and refresh are and \
            where their answers carry the tokens, which the proxy learns as they pass. On top of that:

              --expire-after 30s   an API call with an access token older than that gets the dialect's own \
            expired answer from the proxy, so the app's real refresh runs against the real token endpoint
              the control API      /_authmock/ (authmock ctl): the clock, tokens/expire and tokens/revoke over \
            the learned tokens, fault rules (503, 429 with Retry-After, delays, gather, drop-response: a \
            refresh the backend performed whose answer is lost), the journal with every token's state
              --judge              the suite's expectations over what the app does (GET /_authmock/verdicts, \
            authmock ctl verdicts, a summary at shutdown)
              the console          /_authmock/console in a browser: the time line, the verdicts, buttons

            /_authmock/ and /metrics are the proxy's own; everything else is the backend's. Every serve \
            setting applies (see authmock serve --help); docs/proxy.md has the recipes.
            """
    )

    @Option(help: "The backend's base URL (http:// or https://), e.g. http://127.0.0.1:8000.") var upstream: String
    @Option(
        name: .customLong("expire-after"),
        help: "Answer an API call whose access token is this old (30, 30s, 5m, 1h) with the dialect's expired answer, without forwarding it.")
    var expireAfter: String?
    @Option(name: .customLong("upstream-timeout"), help: "Seconds a forwarded request may take, connecting included.")
    var upstreamTimeout: Double = 30
    @Option(
        name: .customLong("upstream-ca"),
        help: "PEM file of certificates to trust for an https backend beside the system's (a development backend's self-signed one).")
    var upstreamCA: String?
    @OptionGroup var serve: ServeCommand

    func run() async throws {
        var options: UpstreamOptions
        do {
            options = try UpstreamOptions(url: upstream, expireAfterSeconds: try expireAfter.map(Self.seconds))
        } catch {
            throw ValidationError(error.description)
        }
        guard upstreamTimeout > 0, upstreamTimeout.isFinite else { throw ValidationError("--upstream-timeout must be a positive number of seconds") }
        options.timeoutSeconds = upstreamTimeout
        if let upstreamCA {
            guard FileManager.default.isReadableFile(atPath: upstreamCA) else {
                throw ValidationError("--upstream-ca \(upstreamCA): no readable file")
            }
            options.trustedCertificatesFile = upstreamCA
        }
        try await serve.start(upstream: options)
    }

    /// `30`, `30s`, `5m`, `1h`: seconds.
    static func seconds(_ text: String) throws(SettingsError) -> Double {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600]
        let unit = text.last.flatMap { units[$0] }
        guard let number = Double(unit == nil ? text : String(text.dropLast())), number > 0, number.isFinite else {
            throw SettingsError("--expire-after must be a duration such as 30, 30s, 5m or 1h, got '\(text)'")
        }
        return number * (unit ?? 1)
    }
}
