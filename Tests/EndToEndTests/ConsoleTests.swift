import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Testing

/// The live console (`GET /_authmock/console`) in headless Chromium, in
/// front of a real SimpleJWT server: a person's clicks (mouse presses where
/// the buttons are drawn, over the DevTools protocol:
/// Tests/EndToEndTests/Fixtures/browser.py) steer the proxy while a client
/// runs, and the page redraws from the server's events.
@Suite(.serialized) struct ConsoleTests {
    /// One page in Chromium, driven a command at a time.
    final class BrowserPage: @unchecked Sendable {
        let process = Process()
        private let input = Pipe()
        private let output = Pipe()
        private var pending = Data()

        init(_ url: String) throws {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = [
                "python3", repositoryRoot.appendingPathComponent("Tests/EndToEndTests/Fixtures/browser.py").path, RunReportPageTests.chromium, url,
            ]
            process.standardInput = input
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
            let first = try line()
            guard first["value"] as? String == "loaded" else { throw BinaryError("the console did not load: \(first)") }
        }

        /// The next answer line.
        private func line() throws -> [String: Any] {
            while !pending.contains(UInt8(ascii: "\n")) {
                let chunk = output.fileHandleForReading.availableData
                guard !chunk.isEmpty else { throw BinaryError("the browser driver ended") }
                pending += chunk
            }
            let end = pending.firstIndex(of: UInt8(ascii: "\n"))!
            let text = pending[..<end]
            pending = Data(pending[(end + 1)...])
            return (try JSONSerialization.jsonObject(with: Data(text))) as? [String: Any] ?? [:]
        }

        @discardableResult
        func send(_ command: [String: Any]) throws -> Any? {
            input.fileHandleForWriting.write(try JSONSerialization.data(withJSONObject: command) + Data("\n".utf8))
            let answer = try line()
            guard answer["ok"] as? Bool == true else { throw BinaryError("\(command): \(answer["error"] ?? answer)") }
            return answer["value"]
        }

        func wait(_ expression: String, timeout: Double = 15) throws { try send(["wait": expression, "timeout": timeout]) }
        func click(_ selector: String) throws { try send(["click": selector]) }
        func eval(_ expression: String) throws -> Any? { try send(["eval": expression]) }

        func close() {
            _ = try? send(["quit": true])
            process.waitUntilExit()
        }
    }

    /// A client signs in and calls; the developer clicks "Expire access
    /// tokens now" and "Lose the next refresh"; the client's refresh reaches
    /// the real server, which rotates, and its answer is lost; the client
    /// refreshes again with the token it holds and is refused. The page
    /// shows the lost refresh on the time line by its token labels, and the
    /// verdict: a correct client, whose retry of a lost refresh is its right.
    @Test func buttonsSteerTheProxyWhileAClientRuns() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: RunReportPageTests.chromium), "scripts/test.sh installs chromium")
        let (real, proxy) = try ProxyTests.startBoth(["--judge"])
        defer {
            _ = proxy.interrupt()
            real.stop()
        }
        let page = try BrowserPage(proxy.baseURL + "/_authmock/console")
        defer { page.close() }
        try page.wait("document.body.dataset.ready === '1'")
        #expect(try page.eval("document.getElementById('verdict').dataset.verdict") as? String == "nothing-yet")

        let tokens = try await ProxyTests.signIn(proxy)
        #expect(try await ProxyTests.send(.GET, proxy.baseURL + "/api/me", bearer: tokens.access).status == 200)
        try page.wait("document.querySelector('#timeline svg') !== null && document.getElementById('verdict').dataset.verdict === 'pass'")

        try page.click("button[data-action=expire-access]")
        try page.wait(
            "document.getElementById('status').dataset.action === 'expire-access' && document.getElementById('status').dataset.status === '200'")
        try page.click("button[data-action=lose-refresh]")
        try page.wait(
            "document.getElementById('status').dataset.action === 'lose-refresh' && document.getElementById('status').dataset.status === '201'")
        #expect((try page.eval("document.getElementById('faults').textContent") as? String ?? "").contains("drop-response"))

        // The client: its token is refused, it refreshes, the answer is lost, it refreshes again.
        let refused = try await ProxyTests.send(.GET, proxy.baseURL + "/api/me", bearer: tokens.access)
        #expect(refused.status == 401, "expired at the proxy by the button: \(refused.body)")
        await #expect(throws: (any Error).self) { try await ProxyTests.refresh(proxy, tokens.refresh) }
        let retry = try await ProxyTests.refresh(proxy, tokens.refresh)
        #expect(retry.status == 401, "the real server rotated on the lost refresh: \(retry.body)")

        // The page redraws from the server's events: the lost refresh and the refused retry after it.
        try page.wait(
            "Number((document.getElementById('verdict').textContent.match(/\\((\\d+) requests/) || [0, 0])[1]) >= 5"
                + " && document.getElementById('timeline').innerHTML.includes('200→A2,R2')")
        let timeline = try page.eval("document.getElementById('timeline').innerHTML") as? String ?? ""
        #expect(timeline.contains("refresh R1 200→A2,R2"), "the lost refresh by its tokens' labels: \(timeline.prefix(3000))")
        #expect(timeline.contains(">A1 401"), "the expired token refused: \(timeline.prefix(3000))")
        #expect(try page.eval("document.getElementById('verdict').dataset.verdict") as? String == "pass")
        #expect(try page.eval("document.querySelector('[data-expectation=refresh_token_reuse]').dataset.passed") as? String == "true")
    }

    /// With `--admin-token`, the console's address carries the token once:
    /// it is traded for an HttpOnly, SameSite=Strict cookie and the address
    /// is left without it, and the page's own requests (its data, its
    /// events, its buttons) pass with the cookie. A wrong token opens
    /// nothing, and the cookie opens nothing but the control API.
    @Test func theConsoleOpensWithTheAdminToken() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: RunReportPageTests.chromium), "scripts/test.sh installs chromium")
        let admin = "console admin; token"
        let server = try ServingBinary(["--judge", "--admin-token", admin])
        defer { _ = server.interrupt() }
        let escaped = admin.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        // Over HTTP: the trade, and what the cookie opens.
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(redirectConfiguration: .disallow))
        defer { _ = client.shutdown() }
        func get(_ path: String, cookie: String? = nil) async throws -> HTTPClientResponse {
            var request = HTTPClientRequest(url: server.baseURL + path)
            if let cookie { request.headers.add(name: "Cookie", value: cookie) }
            return try await client.execute(request, timeout: .seconds(10))
        }
        #expect(try await get("/_authmock/console").status == .unauthorized)
        #expect(try await get("/_authmock/console?admin_token=wrong").status == .unauthorized)
        let traded = try await get("/_authmock/console?admin_token=\(escaped)")
        #expect(traded.status == .seeOther && traded.headers.first(name: "Location") == "/_authmock/console")
        let setCookie = traded.headers.first(name: "Set-Cookie") ?? ""
        #expect(setCookie.contains("HttpOnly") && setCookie.contains("SameSite=Strict") && setCookie.contains("Path=/_authmock"), "\(setCookie)")
        let cookie = String(setCookie.prefix { $0 != ";" })
        #expect(try await get("/_authmock/clock", cookie: cookie).status == .ok)
        #expect(try await get("/_authmock/clock", cookie: "authmock_admin=wrong").status == .unauthorized)
        #expect(try await get("/api/me", cookie: cookie).status == .unauthorized, "the cookie is no access token")

        // In Chromium: the page loads its data and its buttons act.
        let page = try BrowserPage(server.baseURL + "/_authmock/console?admin_token=\(escaped)")
        defer { page.close() }
        try page.wait("document.body.dataset.ready === '1'")
        #expect(try page.eval("location.search") as? String == "", "the token left the address")
        #expect(try page.eval("document.getElementById('verdict').dataset.verdict") as? String == "nothing-yet")
        try page.click("button[data-action=advance-60]")
        try page.wait(
            "document.getElementById('status').dataset.action === 'advance-60' && document.getElementById('status').dataset.status === '200'")
    }
}
