# The demo's agent: it reads its task, calls the model through the
# interception route, tries to fetch each page, and writes its result. Its
# reward is the share of pages it could fetch: whatever its egress lock let
# through. Written in the small sh subset prime-mock interprets (no loops,
# pipes or command substitution), so each step is spelled out; it is plain
# POSIX sh too.
R=/results/reward.json
rm -rf /results/reached
mkdir -p /results/reached
cat /task/README.md /task/scenario.json
curl -sS -o /dev/null https://intercept.example.net/v1/chat/completions && touch /results/reached/intercept.example.net
curl -sS -o /dev/null https://example.com/ && touch /results/reached/example.com
curl -sS -o /dev/null https://google.com/ && touch /results/reached/google.com

echo -n 0 > /tmp/reward
test -e /results/reached/example.com && echo -n 0.5 > /tmp/reward
test -e /results/reached/google.com && echo -n 0.5 > /tmp/reward
test -e /results/reached/example.com && test -e /results/reached/google.com && echo -n 1 > /tmp/reward

echo -n '{"scenario": ' > $R
cat /task/scenario.json >> $R
echo -n ", \"member\": \"$PRIME_MEMBER_KEY\", \"setup_ran\": " >> $R
test -e /opt/task-deps/ok && echo -n true >> $R || echo -n false >> $R
echo -n ', "reached": {"intercept.example.net": ' >> $R
test -e /results/reached/intercept.example.net && echo -n true >> $R || echo -n false >> $R
echo -n ', "example.com": ' >> $R
test -e /results/reached/example.com && echo -n true >> $R || echo -n false >> $R
echo -n ', "google.com": ' >> $R
test -e /results/reached/google.com && echo -n true >> $R || echo -n false >> $R
echo -n '}, "reward": ' >> $R
cat /tmp/reward >> $R
echo '}' >> $R
