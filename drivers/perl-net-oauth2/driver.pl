#!/usr/bin/perl
# authmock driver (stdio, protocol version 1) for Net::OAuth2 (Debian's
# libnet-oauth2-perl), with the password grant: a
# Net::OAuth2::Profile::Password, `get_access_token(username => ...,
# password => ...)` for the sign-in, and the Net::OAuth2::AccessToken it
# returns, made with `auto_refresh => 1` (the module renews a token that
# expires within 15 s when it is used) and kept between processes as its
# POD shows: `session_freeze` after a call that `changed` it, `session_thaw`
# before the next. Perl applications run concurrent calls as processes (a
# preforking server), so each call here is a forked worker. The module
# never looks at a 401.
use strict;
use warnings;
use Fcntl qw(:flock);
use File::Temp;
use JSON::PP;
use Net::OAuth2::AccessToken;
use Net::OAuth2::Profile::Password;
use POSIX ();

my $json = JSON::PP->new->utf8->canonical;
my $dir = File::Temp->newdir;    # the application's session store and the stdout lock
my $store = "$dir/session";
my $hello;

sub send_line {
    my ($message) = @_;
    open my $lock, '>>', "$dir/stdout.lock" or die "lock: $!";
    flock $lock, LOCK_EX;
    syswrite STDOUT, $json->encode($message) . "\n";
    close $lock;
}

sub profile {
    return Net::OAuth2::Profile::Password->new(
        client_id => $hello->{clientId}, client_secret => $hello->{clientSecret}, site => $hello->{baseURL},
        access_token_path => '/oauth/token', refresh_token_path => '/oauth/token');
}

sub save_session {
    my ($token) = @_;
    open my $out, '>', "$store.$$" or die "save: $!";
    print $out encode_json($token->session_freeze);
    close $out;
    rename "$store.$$", $store or die "save: $!";
}

sub saved_token {
    open my $in, '<', $store or return undef;
    local $/;
    my $session = decode_json(scalar <$in>);
    return Net::OAuth2::AccessToken->session_thaw($session, profile => profile(), auto_refresh => 1);
}

sub work {
    my ($message) = @_;
    if ($message->{op} eq 'login') {
        my $token = eval { profile()->get_access_token(username => $message->{username}, password => $message->{password}) }
          or return { outcome => 'http_error', message => "$@" };
        return { outcome => 'http_error', message => $token->error } if $token->error;
        save_session($token);
        return { outcome => 'ok' };
    }
    my $token = saved_token() or return { outcome => 'reauth_required', message => 'not signed in' };
    my $url = $message->{url} // "$hello->{baseURL}$message->{path}";
    my $response = eval { $token->request($message->{method}, $url, [%{ $message->{headers} // {} }], $message->{body}) };
    # A failed renewal croaks ("failed oauth call update token: received error: 400 ..."): the session is over.
    unless ($response) {
        my $error = "$@";
        return { outcome => 'reauth_required', message => $error } if $error =~ /failed oauth call update token: received error: 40[01]/;
        return { outcome => 'transport_error', message => $error };
    }
    save_session($token) if $token->changed;
    # LWP answers a connection failure with its own 500.
    return { outcome => 'transport_error', message => $response->status_line }
      if ($response->header('Client-Warning') // '') eq 'Internal response';
    return { outcome => $response->is_success ? 'ok' : 'http_error', status => $response->code, body => $response->decoded_content };
}

while (my $line = <STDIN>) {
    my $message = eval { decode_json($line) } or next;
    my ($id, $op) = ($message->{id}, $message->{op} // '');
    1 while waitpid(-1, POSIX::WNOHANG()) > 0;
    if ($op eq 'hello') {
        $hello = $message;
        send_line({ id => $id, ok => JSON::PP::true, driver => 'perl-net-oauth2', version => "$Net::OAuth2::AccessToken::VERSION (Debian)",
                    profiles => ['oauth2'], capabilities => ['url'] });
    } elsif ($op eq 'login' || $op eq 'request') {
        defined(my $pid = fork) or die "fork: $!";
        next if $pid;
        my $result = eval { work($message) } // { outcome => 'transport_error', message => "$@" };
        send_line({ id => $id, ok => ($result->{outcome} eq 'ok' ? JSON::PP::true : JSON::PP::false), %$result });
        POSIX::_exit(0);    # not exit: the worker must not remove the parent's temporary directory
    } elsif ($op eq 'shutdown') {
        1 while wait() != -1;
        send_line({ id => $id, ok => JSON::PP::true });
        last;
    } else {
        send_line({ id => $id, ok => JSON::PP::false, outcome => 'unsupported', message => "unknown op $op" });
    }
}
