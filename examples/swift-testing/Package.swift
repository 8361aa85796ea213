// swift-tools-version:6.0
import PackageDescription

// An app's API client with its token refresh, tested with authmock's
// testing library: one test per built-in case, in `swift test` and Xcode.
let package = Package(
    name: "swift-testing-example",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [.library(name: "APIClient", targets: ["APIClient"])],
    dependencies: [
        // authmock itself; outside this checkout: .package(url: "<authmock's repository>", from: "<version>")
        .package(name: "authmock", path: "../..")
    ],
    targets: [
        // The app's code: URLSession, no authmock.
        .target(name: "APIClient"),
        // The tests link AuthmockTesting only as a test dependency.
        .testTarget(
            name: "APIClientTests",
            dependencies: ["APIClient", .product(name: "AuthmockTesting", package: "authmock")]
        ),
    ]
)
