// swift-tools-version:6.0
// Two authmock drivers for Alamofire 5, one per refresh recipe, on macOS or
// Linux next to a checkout of authmock (README: the commands the saved
// reports were made with). Alamofire is pinned to the version they were
// measured with. CI does not build this package: Alamofire is not in the
// package mirror CI uses.
import PackageDescription

let package = Package(
    name: "authmock-alamofire-drivers",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        // Alamofire unmodified on swift-corelibs-foundation; Moya's drivers use it too.
        .library(name: "AlamofireCorelibsSupport", targets: ["AlamofireCorelibsSupport"]),
        .executable(name: "alamofire-authenticator", targets: ["alamofire-authenticator"]),
        .executable(name: "alamofire-request-interceptor", targets: ["alamofire-request-interceptor"]),
    ],
    dependencies: [
        .package(url: "https://github.com/Alamofire/Alamofire.git", exact: "5.12.0"),
        .package(name: "authmock", path: "../.."),
    ],
    targets: [
        // Where corelibs differs from Apple's Foundation, answered from outside Alamofire: a URLSession delegate and a retrier.
        .target(name: "AlamofireCorelibsSupport", dependencies: [.product(name: "Alamofire", package: "Alamofire")]),
        // What both recipes share: sign-in, token decoding, and a call as the app makes it.
        .target(
            name: "AlamofireDriverSupport",
            dependencies: [
                "AlamofireCorelibsSupport", .product(name: "Alamofire", package: "Alamofire"),
                .product(name: "DriverKit", package: "authmock"),
            ]),
        // Recipe 1: AuthenticationInterceptor with an Authenticator, as Alamofire's documentation writes it.
        .executableTarget(name: "alamofire-authenticator", dependencies: ["AlamofireDriverSupport"]),
        // Recipe 2: a hand-written RequestInterceptor (adapt and retry), as blog posts write it.
        .executableTarget(name: "alamofire-request-interceptor", dependencies: ["AlamofireDriverSupport"]),
    ]
)
