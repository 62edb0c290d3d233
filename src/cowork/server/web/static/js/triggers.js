// An automation's trigger in words ("Weekdays at 09:00 (Europe/Paris)", "When inbox/*.pdf is created"), its next
// fire time, and the short times and durations of runs. Pure functions over the flow file's trigger object; a cron
// expression this does not know how to say stays as written.

const pad = (n) => String(n).padStart(2, "0");
const DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
  "November", "December"];
const NICKNAMES = {
  "@hourly": "Every hour",
  "@daily": "Every day at 00:00",
  "@midnight": "Every day at 00:00",
  "@weekly": "Every Sunday at 00:00",
  "@monthly": "On the 1st of every month at 00:00",
  "@yearly": "Every 1 January at 00:00",
  "@annually": "Every 1 January at 00:00",
};

const NUMBER = /^\d{1,2}$/;

function ordinal(n) {
  const tens = n % 100;
  if (tens >= 11 && tens <= 13) return `${n}th`;
  return `${n}${{ 1: "st", 2: "nd", 3: "rd" }[n % 10] || "th"}`;
}

function list(words) {
  return words.length < 2 ? words.join("") : `${words.slice(0, -1).join(", ")} and ${words[words.length - 1]}`;
}

// The day-of-week field as words, or null when it is not a plain list or range of days.
function weekdays(field) {
  if (field === "*") return "Every day";
  if (field === "1-5") return "Weekdays";
  if (field === "0,6" || field === "6,0" || field === "6-7" || field === "6,7") return "Weekends";
  const days = [];
  for (const part of field.split(",")) {
    const range = part.match(/^(\d)-(\d)$/);
    if (range) {
      const [from, to] = [Number(range[1]), Number(range[2])];
      if (from > to || to > 7) return null;
      for (let d = from; d <= to; d += 1) days.push(d % 7);
    } else if (/^\d$/.test(part) && Number(part) <= 7) {
      days.push(Number(part) % 7);
    } else {
      return null;
    }
  }
  return `Every ${list([...new Set(days)].map((d) => DAYS[d]))}`;
}

// A five-field cron expression in words, or null for one this cannot say plainly.
export function cronWords(expression) {
  const text = expression.trim().replace(/\s+/g, " ");
  if (NICKNAMES[text.toLowerCase()]) return NICKNAMES[text.toLowerCase()];
  const fields = text.split(" ");
  if (fields.length !== 5) return null;
  const [minute, hour, dom, month, dow] = fields;
  const every = minute.match(/^\*\/(\d+)$/);
  if (every && hour === "*" && dom === "*" && month === "*" && dow === "*") {
    return Number(every[1]) === 1 ? "Every minute" : `Every ${Number(every[1])} minutes`;
  }
  if (minute === "*" && hour === "*" && dom === "*" && month === "*" && dow === "*") return "Every minute";
  if (!NUMBER.test(minute)) return null;
  const everyHours = hour.match(/^\*\/(\d+)$/);
  if ((hour === "*" || everyHours) && dom === "*" && month === "*" && dow === "*") {
    const n = everyHours ? Number(everyHours[1]) : 1;
    return `${n === 1 ? "Every hour" : `Every ${n} hours`} at :${pad(Number(minute))}`;
  }
  // Hours: one, or a list ("09:00 and 17:00").
  if (!hour.split(",").every((h) => NUMBER.test(h) && Number(h) < 24)) return null;
  const times = list(hour.split(",").map((h) => `${pad(Number(h))}:${pad(Number(minute))}`));
  if (dom === "*" && month === "*") {
    const days = weekdays(dow);
    return days ? `${days} at ${times}` : null;
  }
  if (dow === "*" && NUMBER.test(dom) && Number(dom) >= 1 && Number(dom) <= 31) {
    if (month === "*") return `On the ${ordinal(Number(dom))} of every month at ${times}`;
    if (NUMBER.test(month) && Number(month) >= 1 && Number(month) <= 12) return `Every ${Number(dom)} ${MONTHS[Number(month) - 1]} at ${times}`;
  }
  return null;
}

// What starts it, in words (without the next fire time).
export function triggerWords(trigger) {
  const t = trigger || { type: "manual" };
  switch (t.type) {
    case "manual":
      return "Run by hand";
    case "cron": {
      const words = cronWords(t.expression || "") || `On the schedule ${t.expression}`;
      return `${words} (${t.timezone || "UTC"})`;
    }
    case "file": {
      const events = t.events && t.events.length && t.events.length < 3 ? t.events : null;
      const patterns = (t.patterns || []).join(" or ");
      return `When a file matching ${patterns} ${events ? `is ${events.join(" or ")}` : "changes"}`;
    }
    case "sessionEvent":
      return `On each session's ${t.eventType} event`;
    case "mcpNotification":
      return `On ${t.method} from the MCP server ${t.server}`;
    default:
      return `Trigger: ${t.type}`; // a trigger type newer than this page
  }
}

// A moment as a short local time: "09:00" today, "Mon 09:00" within the week ahead, else "2 Jun 09:00".
export function when(iso, now = new Date()) {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return "";
  const time = `${pad(d.getHours())}:${pad(d.getMinutes())}`;
  const sameDay = d.toDateString() === now.toDateString();
  if (sameDay) return time;
  const days = (d - now) / 86400000;
  if (days > 0 && days < 6) return `${DAYS[d.getDay()].slice(0, 3)} ${time}`;
  const year = d.getFullYear() === now.getFullYear() ? "" : ` ${d.getFullYear()}`;
  return `${d.getDate()} ${MONTHS[d.getMonth()].slice(0, 3)}${year} ${time}`;
}

// 120 ms, 1.2 s, 42 s, 3 min 5 s, 1 h 12 min.
export function elapsed(ms) {
  if (ms == null || Number.isNaN(ms)) return "";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const seconds = ms / 1000;
  if (seconds < 10) return `${seconds.toFixed(1)} s`;
  if (seconds < 60) return `${Math.round(seconds)} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min${Math.round(seconds % 60) ? ` ${Math.round(seconds % 60)} s` : ""}`;
  return `${Math.floor(minutes / 60)} h${minutes % 60 ? ` ${minutes % 60} min` : ""}`;
}
